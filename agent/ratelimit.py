"""Abuse limits and token budgets, atomic on the shared state (agent/shared.py).

Messages are counted per session and per IP in moving one-minute windows (never more than the
limit in any 60 s, so a burst across a minute's edge is not two bursts). Tokens are reserved when a
turn starts (refused when the conversation, the client's IP or the site has spent its budget)
and settled to the real figure when it ends, so concurrent turns cannot all pass and overspend.
"""

import asyncio
import ipaddress
import logging
import math
import re
import time
import unicodedata
from dataclasses import dataclass, field

from django.conf import settings

from agent.exceptions import SharedStateDown, TokenBudgetSpent
from agent.holds import HoldSettlement
from agent.shared import Counter, state
from blog.embeddings import engine_text, query_token_count
from ops.metrics import refusal_count

logger = logging.getLogger(__name__)
WINDOW = 60  # seconds: the "per minute" of the message limits, a moving window
SEARCH_UNIT_TOKENS = 32  # a public search weighs one per this many query tokens (a question)
# The most of a chat message any search embeds: the offline model searches with its first 500
# characters, and a tool's query is capped at 500. Past that, length costs tokens (budgeted).
MESSAGE_EMBEDDED_CHARS = 500
# Counted by the model's tokenizer this far (the search API's cap on `q`): a longer query is
# refused (422) after it is weighed, and the tokenizer took 24 ms for 10,000 characters.
QUERY_COUNTED_CHARS = 500
DAY = 24 * 3600
# The budgets that refuse until the day's end (00:00 UTC), by their refusal's reason; the
# `rate_limited` event names them, so the panel can say whose day is spent.
DAY_BUDGETS = frozenset({"ip_budget", "network_budget", "daily_budget"})
# Refusals the `rate_limited` event names, so the panel says what ran out, not "asking faster
# than I can answer": the day budgets, and an address's (or /48's) messages in 24 h.
NAMED_REFUSALS = DAY_BUDGETS | {"ip_day", "network_day"}
# RFC 6052's well-known prefix: a translator's IPv6 name for an IPv4 host, the last 32 bits.
NAT64_PREFIX = ipaddress.IPv6Network("64:ff9b::/96")
USERNAME_MAX_LENGTH = 150  # django.contrib.auth's User.username, and its sign-in form's
# What the embedder's tokenizer (XLM-R's) makes of a query: an ASCII word in pieces of about
# four letters (split where the case turns, "aBaB" is a piece per "Ba"), a number, and every
# other visible character, a token each. Punctuation and single letters are a token apiece.
_QUERY_PIECE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+|\S")


@dataclass(frozen=True)
class Refusal:
    message: str
    retry_after: int
    reason: str = ""  # which limit: session, ip, *_budget (the refusals metric's label)


def network_bucket(client_ip: str) -> str:
    """The /48 a native IPv6 visitor's /64 lies in, or "" (IPv4, or IPv6 carrying IPv4).

    A home or office connection is routinely given a /56 or a /48: 256 to 65,536 /64s, each a
    fresh allowance of every per-address limit. Ten of them spent the whole site's daily token
    budget (AGENT_TOKENS_PER_DAY is ten addresses' worth), for everyone. The /48 is counted
    too, at several addresses' worth (AGENT_*_PER_NETWORK): enough for an office of visitors.
    """
    try:
        address = ipaddress.ip_address(client_ip)
    except ValueError:
        return ""
    if not isinstance(address, ipaddress.IPv6Address) or ":" not in address_bucket(client_ip):
        return ""
    return str(ipaddress.IPv6Network((address, 48), strict=False))


def address_bucket(client_ip: str) -> str:
    """The key one visitor's address counts under.

    An IPv6 visitor is given a whole /64 (often far more) and may use any address in it, so
    limits count the /64; an IPv4-mapped IPv6 address is its IPv4 address. So are the
    transition addresses that carry the client's IPv4 address: 6to4 gives its holder a /48
    (65,536 fresh /64s), and a Teredo /64 is its server's, shared by all of that server's clients.
    Behind a NAT64 or SIIT translator every IPv4 visitor has an address in 64:ff9b::/96 (RFC
    6052), all in one /64: one visitor's flood refused them all.
    """
    try:
        address = ipaddress.ip_address(client_ip)
    except ValueError:
        return client_ip
    if isinstance(address, ipaddress.IPv6Address):
        embedded = (
            address.ipv4_mapped
            or address.sixtofour
            or (address.teredo or (None, None))[1]
            or _translated(address)
        )
        if embedded is not None:
            return str(embedded)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def _translated(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address a NAT64/SIIT translator wrote into the well-known prefix, if any."""
    if address in NAT64_PREFIX:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def embedding_weight(text: str, limit: int) -> int:
    """One per SEARCH_UNIT_TOKENS of `text` (a question weighs one), at most `limit`.

    Embedding a query costs with its length: 500 Chinese characters took 1.3 CPU-seconds
    against 0.04 for a short question.
    """
    return min(max(limit, 1), 1 + (query_tokens_estimate(text) - 1) // SEARCH_UNIT_TOKENS)


def query_tokens_estimate(text: str) -> int:
    """The tokens the embedder reads in `text`: an estimate without the tokenizer (never far
    below), raised to the local model's own count of the first QUERY_COUNTED_CHARS.

    The chat's estimate (a token per three ASCII characters) suits prose, but "a.a.a." or
    "*a*a*a" is a token per character: 500 such characters were 505 tokens, weighed as 167,
    and cost 2.1 to 2.5 CPU-seconds each, as much as the longest query allowed.
    Counted on the text the embedder reads (NFKC): "㌚" is one character typed and five read,
    so 31 of them weighed as a question and cost as much as 128 Chinese characters (7 times).
    """
    tokens = 1
    for match in _QUERY_PIECE.finditer(engine_text(text)):
        piece = match.group()
        tokens += 1 + (len(piece) - 1) // 4 if piece.isascii() and piece.isalnum() else 1
    # Letters no language spells are a token per one or two: 120 of them ("qxzqxz…") were
    # 31 by the rule and 125 to the model, the most a query is embedded for, weighed as a
    # question. The local model's own count of what a search embeds is the floor.
    counted = query_token_count(text[:QUERY_COUNTED_CHARS]) or 0
    return max(tokens, counted)


async def message_allow(*, session_key: str, client_ip: str, content: str = "") -> Refusal | None:
    """Count one message against the per-session and per-IP limits; refuse when over.

    A message weighs what searching for it costs (embedding_weight of the part a search
    embeds): with the offline model a 4,000-character Chinese message took 1.5 CPU-seconds
    against 0.08 for a question, so thirty a minute from one address kept a core busy.
    """
    network = network_bucket(client_ip)
    address = address_bucket(client_ip)
    limits = (settings.AGENT_MESSAGES_PER_MINUTE, settings.AGENT_MESSAGES_PER_MINUTE_PER_IP)
    weight = embedding_weight(content[:MESSAGE_EMBEDDED_CHARS], min(limits))
    counters: list[Counter] = [(f"rl:s:{session_key}", limits[0]), (f"rl:ip:{address}", limits[1])]
    if network:
        counters.append((f"rl:net:{network}", settings.AGENT_MESSAGES_PER_MINUTE_PER_NETWORK))
    reasons = ["session", "ip", "network"][: len(counters)]
    # The address's (and its /48's) messages in any 24 h, in the same trip: with the offline
    # model no token budget binds, so the minute's limit alone let one address store 43,200
    # turns a day. A refusal names when the oldest message counted leaves the window.
    day = address_counters(
        "rl:day",
        client_ip,
        settings.AGENT_MESSAGES_PER_DAY_PER_IP,
        settings.AGENT_MESSAGES_PER_DAY_PER_NETWORK,
    )
    counters += [(key, limit, DAY) for key, limit in day]
    reasons += ["ip_day", "network_day"][: len(day)]
    over, wait = await state().hit(counters, WINDOW, weight)
    if not over:
        return None
    retry_after = _seconds(wait)
    if over > len(counters) - len(day):
        message = "This address has sent its messages for the day. Please come back later."
    else:
        message = f"Too many messages. Please wait {retry_after} s before asking again."
    return Refusal(message, retry_after, reasons[over - 1])


async def feedback_allow(*, session_key: str, client_ip: str) -> Refusal | None:
    """Count one vote against the session's AGENT_FEEDBACK_PER_MINUTE and the address's
    AGENT_FEEDBACK_PER_MINUTE_PER_IP; refuse when over.

    Per session alone, one address with many sessions (each with a turn of its own) could
    write about thirty times the session limit a minute; per address alone, each /64 of an
    IPv6 /48 had the address's allowance afresh.
    """
    counters = [(f"rl:fb:{session_key}", settings.AGENT_FEEDBACK_PER_MINUTE)]
    counters += address_counters(
        "rl:fb:ip",
        client_ip,
        settings.AGENT_FEEDBACK_PER_MINUTE_PER_IP,
        settings.AGENT_FEEDBACK_PER_MINUTE_PER_NETWORK,
    )
    over, wait = await state().hit(counters, WINDOW)
    if over:
        retry_after = _seconds(wait)
        message = f"Too many votes. Please wait {retry_after} s before voting again."
        return Refusal(message, retry_after, "feedback")
    return None


async def search_allow(*, client_ip: str, query: str = "") -> Refusal | None:
    """Count one search against SEARCH_REQUESTS_PER_MINUTE_PER_IP (and an IPv6 visitor's /48
    against SEARCH_REQUESTS_PER_MINUTE_PER_NETWORK); refuse when over.

    A search weighs one per SEARCH_UNIT_TOKENS of its query: embedding a 500-character
    Chinese query took 1.3 CPU-seconds against 0.04 for a short question, so sixty long
    ones a minute, all allowed by count, kept more than one core busy for one address.
    Counted by the /64 alone, each of a /48's 65,536 /64s had that allowance afresh.
    """
    limit = settings.SEARCH_REQUESTS_PER_MINUTE_PER_IP
    return await _per_minute(
        address_counters(
            "rl:search", client_ip, limit, settings.SEARCH_REQUESTS_PER_MINUTE_PER_NETWORK
        ),
        "Too many searches. Please wait {retry_after} s.",
        "search",
        embedding_weight(query, limit),
    )


async def transcript_allow(*, client_ip: str) -> Refusal | None:
    """Count one transcript read against AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP; refuse when over.

    A read loads every turn of the conversation with its tool results (about 60 ms of CPU at
    the AGENT_TURNS_PER_CONVERSATION cap of 100); reads looped from one address held every
    stream of the process back. The panel reads a transcript once per page load. One
    session's cookie reads from any address, so each /64 of a /48 read afresh: its /48 counts.
    """
    return await _per_minute(
        address_counters(
            "rl:transcript",
            client_ip,
            settings.AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP,
            settings.AGENT_TRANSCRIPTS_PER_MINUTE_PER_NETWORK,
        ),
        "Too many transcript reads. Please wait {retry_after} s.",
        "transcript",
    )


async def socket_allow(*, client_ip: str) -> bool:
    """Count one new chat socket against the address's AGENT_SOCKETS_PER_MINUTE_PER_IP (and
    an IPv6 visitor's /48 against AGENT_SOCKETS_PER_MINUTE_PER_NETWORK)."""
    counters = address_counters(
        "rl:ws",
        client_ip,
        settings.AGENT_SOCKETS_PER_MINUTE_PER_IP,
        settings.AGENT_SOCKETS_PER_MINUTE_PER_NETWORK,
    )
    try:
        return not (await state().hit(counters, WINDOW)).over
    except SharedStateDown:
        # Let it open: the socket's first message is told `unavailable` (no turn starts
        # uncounted), where a refused handshake told the panel nothing; the process's own
        # bucket per address (config/request_rate.py) still bounds how fast sockets open.
        return True


async def frame_over(*, client_ip: str) -> str:
    """Count one chat frame against AGENT_FRAMES_PER_MINUTE_PER_IP, all the address's sockets
    together: "" when allowed, else which allowance it is one too many for.

    Each socket has its own AGENT_FRAMES_PER_MINUTE, and an address may hold 100 sockets: 60
    sockets of one address, each within its own allowance, sent 7,200 frames of 64 kB that
    cost 49.9 CPU-seconds of the process's one event loop (/healthz waited up to 8 s). A
    browser sends a frame per question, vote or Stop, which have lower limits of their own.
    An IPv6 visitor's /48 shares AGENT_FRAMES_PER_MINUTE_PER_NETWORK: by the /64 alone, each of
    its 65,536 /64s had the allowance afresh.
    """
    limits = (settings.AGENT_FRAMES_PER_MINUTE_PER_IP, settings.AGENT_FRAMES_PER_MINUTE_PER_NETWORK)
    try:
        over = (await state().hit(address_counters("rl:frames", client_ip, *limits), WINDOW)).over
    except SharedStateDown:  # each socket's own window still holds (agent.consumers)
        return ""
    if not over:
        return ""
    return f"its {('address', 'network')[over - 1]} is over {limits[over - 1]} frames a minute"


def admin_login_name(username: str) -> str:
    """The form a user name is counted under (and a known device remembers).

    Django's sign-in form NFKC-normalises the name before it looks the user up, so "ｅｄｉｔｏｒ"
    (full width) or "𝐞𝐝𝐢𝐭𝐨𝐫" signs in as "editor": counted as typed, each spelling had a
    fresh allowance of guesses at the same account.

    A name longer than Django's 150 characters is not normalised, as Django's form does not
    normalise it (NFKC never shortens a text, so it could not sign in): NFKC costs with the
    text and grows some characters eighteenfold, and one 2.4 MB post of 800,000 "ﷺ" held the
    event loop for 0.8 CPU-seconds before the attempt was counted.
    """
    name = username.strip()
    if len(name) > USERNAME_MAX_LENGTH:
        return name[:USERNAME_MAX_LENGTH].casefold()
    return unicodedata.normalize("NFKC", name).strip().casefold()[:USERNAME_MAX_LENGTH]


async def admin_login_allow(
    *, client_ip: str, username: str, device: str = "", attempt: str = ""
) -> Refusal | None:
    """Count one admin sign-in attempt per address and per user name; refuse past
    ADMIN_LOGIN_ATTEMPTS in ADMIN_LOGIN_WINDOW seconds.

    Django's admin lets anyone try passwords as fast as they can post them. Per address stops
    one machine (and an IPv6 /48 its /64s: each wrong password costs a password hash, about half
    a CPU-second, and a /48's 65,536 /64s each had the allowance at fresh user names); per user
    name stops many machines taking turns at one account. `device` is
    the id of a browser that signed in as this user before: it counts on its own instead of
    the user name, so a flood of guesses at the name does not lock its owner out. `attempt`
    names the count, for `admin_login_succeeded` to take back.
    """
    counters = _admin_login_counters(client_ip=client_ip, username=username, device=device)
    over, wait = await state().hit(counters, settings.ADMIN_LOGIN_WINDOW, event=attempt)
    if over:
        retry_after = _seconds(wait)
        return Refusal(f"Too many sign-in attempts. Try again in {retry_after} s.", retry_after)
    return None


async def admin_login_succeeded(
    *, client_ip: str, username: str, device: str = "", attempt: str
) -> None:
    """Take back the count of an attempt that signed in: only failed ones count.

    Counted first and taken back after, never counted after a failure: guesses sent at once
    would all pass the check before the first of them failed. Counted as they were, an editor
    who signed in ten times in a quarter of an hour (a session per browser, a few sign-outs)
    was refused the eleventh, right password or not.
    """
    counters = _admin_login_counters(client_ip=client_ip, username=username, device=device)
    await state().forget([key for key, _limit in counters], attempt)


def _admin_login_counters(*, client_ip: str, username: str, device: str) -> list[tuple[str, int]]:
    name = admin_login_name(username)
    per_name = f"rl:login:d:{name}:{device}" if device else f"rl:login:u:{name}"
    limit = settings.ADMIN_LOGIN_ATTEMPTS
    per_address = address_counters(
        "rl:login:ip", client_ip, limit, settings.ADMIN_LOGIN_ATTEMPTS_PER_NETWORK
    )
    return [*per_address, (per_name, limit)]


def _seconds(wait: float) -> int:
    """Whole seconds for Retry-After, never 0 (a client told 0 retries at once)."""
    return max(1, math.ceil(wait))


def address_counters(
    prefix: str, client_ip: str, limit: int, network_limit: int
) -> list[tuple[str, int]]:
    """The counter of a client's address, and of its IPv6 /48 when it has one: counted by
    the /64 alone, each of a /48's 65,536 /64s had the allowance afresh."""
    counters = [(f"{prefix}:{address_bucket(client_ip)}", limit)]
    network = network_bucket(client_ip)
    if network:
        counters.append((f"{prefix}:net:{network}", network_limit))
    return counters


async def _per_minute(
    counters: list[tuple[str, int]], message: str, reason: str, weight: int = 1
) -> Refusal | None:
    over, wait = await state().hit(counters, WINDOW, weight)
    if over:
        retry_after = _seconds(wait)
        return Refusal(message.format(retry_after=retry_after), retry_after, reason)
    return None


@dataclass
class TurnBudget:
    """The tokens one turn holds on its budgets; it asks for more before each model call.

    A turn used to hold AGENT_TOKENS_RESERVE at its start and then spend what its steps cost:
    five long steps spent several times what was left. Now no model call starts unless the
    turn holds what it will cost, taken atomically from the room the budgets have left.
    """

    conversation_id: str | None  # None for a new conversation: no budget key yet
    client_ip: str
    held: int
    # The UTC day the turn began: its holds and its settlement all count on that day's budgets.
    # Settled on the next day's, a turn running at midnight took its unspent hold off the new
    # day (a negative count: more room) and left the whole hold spent on the old one.
    day: str = field(default_factory=lambda: _today())
    # The budget that last refused to cover more: its words and its wait are the visitor's.
    refusal: Refusal | None = None
    # The turn whose hold record (agent/shared.py) the holds are written on, so recovery can
    # settle them when the worker dies mid-turn ("" for none: settled by these figures alone).
    turn_id: str = ""

    async def cover(self, tokens: int) -> bool:
        """Hold at least `tokens` in all (the turn's spending once its next call is done)."""
        if tokens <= self.held:
            return True
        if self.conversation_id is None and tokens > settings.AGENT_TOKENS_PER_CONVERSATION:
            refusal_count(reason="conversation_budget", address=self.client_ip)
            self.refusal = _CONVERSATION_SPENT
            return False  # a new conversation's first turn has that budget too
        # The refusal's wait runs to the shared clock's midnight, as at the turn's start.
        now = await state().clock()
        budgets = _budgets(
            conversation_id=self.conversation_id, client_ip=self.client_ip, day=self.day, now=now
        )
        more = tokens - self.held
        over, _ = await state().reserve(
            [b[:3] for b in budgets], more, whole=True, hold=self.turn_id
        )
        if over:
            # Counted as a refusal at the turn's start is: a budget with less room left than
            # one model call needs lets every turn start and stops it here (before the call,
            # or as its answer grows); its refusal at the start (room 0) may never come.
            self.refusal = budgets[over - 1][3]
            refusal_count(reason=self.refusal.reason, address=self.client_ip)
            if self.refusal.reason == "daily_budget":
                _site_budget_short_say(self.day, more)
            return False
        self.held += more
        return True

    async def grant(self, tokens: int) -> bool:
        """`cover`, as the loop asks it (its `Budget`): refused by a day's budget (the address's,
        the network's or the site's), it raises TokenBudgetSpent with that budget's words and
        wait. The conversation's own budget answers False: the loop's words say a new chat.

        The visitor whose answer the site's budget cut was told to ask in a new chat, which
        the same budget then refused too.

        Raises:
            TokenBudgetSpent: a day's budget has no room for `tokens`.
        """
        if await self.cover(tokens):
            return True
        refusal = self.refusal
        if refusal is not None and refusal.reason in DAY_BUDGETS:
            raise TokenBudgetSpent(refusal.message, refusal.retry_after, refusal.reason)
        return False


async def budget_reserve(
    *, conversation_id: str | None, client_ip: str, turn_id: str = ""
) -> Refusal | TurnBudget:
    """Hold up to AGENT_TOKENS_RESERVE tokens on every budget the turn spends, or refuse the
    turn when one has no room left. With `turn_id`, the hold is written on the turn's hold
    record, which recovery settles if the worker dies before the turn does.

    Cancelled meanwhile (the visitor closed the socket right after the message), it waits for
    the store's answer and gives back what was held: the hold is taken in Redis even when the
    reply is never read, and it stayed spent for the day on the address's and the site's budget.
    """
    reserving = asyncio.ensure_future(
        _reserve(conversation_id=conversation_id, client_ip=client_ip, turn_id=turn_id)
    )
    try:
        return await asyncio.shield(reserving)
    except asyncio.CancelledError:
        held = await reserving
        if isinstance(held, TurnBudget):
            await budget_settle(budget=held, conversation_id="", tokens=0)
        raise


async def _reserve(
    *, conversation_id: str | None, client_ip: str, turn_id: str
) -> Refusal | TurnBudget:
    now = await state().clock()
    day = _today(now)
    budgets = _budgets(conversation_id=conversation_id, client_ip=client_ip, day=day, now=now)
    over, held = await state().reserve(
        [b[:3] for b in budgets], settings.AGENT_TOKENS_RESERVE, hold=turn_id
    )
    if over:
        refusal = budgets[over - 1][3]
        if refusal.reason == "daily_budget":
            _site_budget_spent_say(day)
        return refusal
    return TurnBudget(
        conversation_id=conversation_id, client_ip=client_ip, held=held, day=day, turn_id=turn_id
    )


_site_budget_spent_said = [""]  # the UTC day this process last said so
_site_budget_short_said = [""]


def _site_budget_spent_say(day: str) -> None:
    """Say once a day per process that the site's budget is spent: every visitor is refused
    from now on, and only the refusal count said so (no turn starts, so no turn line)."""
    if _site_budget_spent_said[0] != day:
        _site_budget_spent_said[0] = day
        logger.warning(
            "the site's daily token budget (AGENT_TOKENS_PER_DAY=%d) is spent for %s: every "
            "chat message is refused until 00:00 UTC",
            settings.AGENT_TOKENS_PER_DAY,
            day,
        )


def _site_budget_short_say(day: str, needed: int) -> None:
    """Say once a day per process that a running turn was stopped for want of the site's room.

    It said the budget was spent and every message refused: in `make run WORKERS=2` with
    AGENT_TOKENS_PER_DAY=8000 and nothing spent, a two-step question was stopped before its
    second call and the next question was answered.
    """
    if _site_budget_short_said[0] != day:
        _site_budget_short_said[0] = day
        logger.warning(
            "the site's daily token budget (AGENT_TOKENS_PER_DAY=%d) had less room left for %s "
            "than a running turn needed (%d more tokens): it was stopped, as will be any turn "
            "that needs more than is left until 00:00 UTC",
            settings.AGENT_TOKENS_PER_DAY,
            day,
            needed,
        )


async def budget_settle(*, budget: TurnBudget, conversation_id: str, tokens: int) -> None:
    """Replace the turn's hold with the tokens it really spent."""
    await state().settle(
        budget_settlement(budget=budget, conversation_id=conversation_id, tokens=tokens)
    )


# A settlement Redis missed (away as the turn ended) is tried again this often (seconds, doubled
# up to SETTLE_RETRY_MAX) for SETTLE_RETRY_WITHIN seconds, about as long as a day's key lives.
SETTLE_RETRY_FIRST = 1.0
SETTLE_RETRY_MAX = 15.0
SETTLE_RETRY_WITHIN = 2 * 24 * 3600


async def budget_settle_again(settlement: HoldSettlement) -> bool:
    """Settle a turn whose settlement Redis did not take, once Redis answers; True when done.

    A turn that ended while Redis was away (or frozen) kept its whole hold, the reserve at
    least, and recovery later settled it to its last checkpoint before the outage, not to
    what it spent. Only by the hold record: its settlement is exact however often it runs,
    and a record gone means the first try did land (its answer was lost), where the fallback's
    changes would be applied twice.
    """
    if not settlement.turn_id:
        return False
    by_record = settlement._replace(fallback=[])
    wait, deadline = SETTLE_RETRY_FIRST, time.monotonic() + SETTLE_RETRY_WITHIN
    while time.monotonic() < deadline:
        await asyncio.sleep(wait)
        try:
            await state().settle(by_record)
        except SharedStateDown:  # said by agent.shared
            wait = min(wait * 2, SETTLE_RETRY_MAX)
            continue
        logger.info("turn %s settled once the shared state answered again", settlement.turn_id)
        return True
    return False


def budget_settlement(*, budget: TurnBudget, conversation_id: str, tokens: int) -> HoldSettlement:
    """The settlement that replaces the turn's hold with the tokens spent: by its hold record
    (exact however often the turn was settled: recovery may have been first), or, without
    one, by the (key, amount, ttl) changes of its own figures."""
    fallback = [
        (key, tokens - budget.held, ttl)
        for key, _cap, ttl, _ in _budgets(
            conversation_id=budget.conversation_id, client_ip=budget.client_ip, day=budget.day
        )
    ]
    extras = _new_conversation(budget, conversation_id)
    fallback += [(key, tokens, ttl) for key, ttl in extras]
    return HoldSettlement(
        budget.turn_id, tokens, extras, [change for change in fallback if change[1]]
    )


async def budget_attach(*, budget: TurnBudget, conversation_id: str) -> None:
    """Write a new conversation's budget on the turn's hold record (charged when it settles),
    so a recovery settles it too."""
    extras = _new_conversation(budget, conversation_id)
    if extras and budget.turn_id:
        await state().hold_attach(budget.turn_id, extras)


async def budget_holds_renew(*, spent: dict[str, int]) -> None:
    """Record what each running turn (by id) has spent so far; its hold's lease is renewed."""
    await state().holds_renew(spent)


async def budget_holds_recover(*, turn_ids: list[str]) -> dict[str, int]:
    """Settle to what their checkpoints counted the holds of the turns recovery closed, and of
    every turn whose lease ended without one (a worker killed before its turn was recorded).

    A worker killed mid-turn settled nothing: its hold (AGENT_TOKENS_RESERVE and more) stayed
    spent on the address's and the site's budgets for the day.

    Returns:
        The tokens given back, by turn id.
    """
    return await state().holds_recover(turn_ids)


def _new_conversation(budget: TurnBudget, conversation_id: str) -> list[tuple[str, int]]:
    """The (key, ttl) of the conversation a turn began (no budget key when it held)."""
    if budget.conversation_id is None and conversation_id:
        return [(f"tok:c:{conversation_id}", 7 * DAY)]
    return []


_CONVERSATION_SPENT = Refusal(
    "This conversation has used its token budget. Start a new chat.", 0, "conversation_budget"
)


def _today(now: float | None = None) -> str:
    """The UTC day of `now` (Unix seconds; this process's clock when None).

    A turn starts by Redis's clock (`state().clock()`): by each worker's own, around midnight a
    worker a minute behind charged its turns to the day that had ended, which no other
    worker's budget read any more, and one ahead to a day nobody counted yet.
    """
    return time.strftime("%Y-%m-%d", time.gmtime(now))


def daily_budget_key(day: str = "", *, now: float | None = None) -> str:
    """The shared state's key of the site's tokens spent (and held) on `day` (else the UTC
    day of `now`, else today by this process's clock)."""
    return f"tok:d:{day or _today(now)}"


def _budgets(
    *, conversation_id: str | None, client_ip: str, day: str = "", now: float | None = None
) -> list[tuple[str, int, int, Refusal]]:
    network = network_bucket(client_ip)
    client_ip = address_bucket(client_ip)
    day = day or _today(now)
    # Rounded up: truncated, the panel said "try again at 11:59 PM" for a budget that frees at
    # midnight (UTC): Redis's midnight, when `now` is its clock (the day's keys change then).
    tomorrow = math.ceil(DAY - (time.time() if now is None else now) % DAY)
    budgets = []
    if conversation_id is not None:
        budgets.append(
            (
                f"tok:c:{conversation_id}",
                settings.AGENT_TOKENS_PER_CONVERSATION,
                7 * DAY,
                _CONVERSATION_SPENT,
            )
        )
    budgets += [
        (
            f"tok:ip:{client_ip}:{day}",
            settings.AGENT_TOKENS_PER_IP_PER_DAY,
            2 * DAY,
            Refusal(
                "You have used today’s budget. Please come back tomorrow.", tomorrow, "ip_budget"
            ),
        ),
    ]
    if network:
        budgets.append(
            (
                f"tok:net:{network}:{day}",
                settings.AGENT_TOKENS_PER_NETWORK_PER_DAY,
                2 * DAY,
                Refusal(
                    "Your network has used today’s budget. Please come back tomorrow.",
                    tomorrow,
                    "network_budget",
                ),
            )
        )
    budgets += [
        (
            daily_budget_key(day),
            settings.AGENT_TOKENS_PER_DAY,
            2 * DAY,
            Refusal(
                "The assistant has used today’s budget. Please come back tomorrow.",
                tomorrow,
                "daily_budget",
            ),
        ),
    ]
    return budgets
