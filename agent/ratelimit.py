"""Abuse limits and token budgets, atomic on the shared state (agent/shared.py).

Messages are counted per session and per IP in one-minute windows. Tokens are reserved when a
turn starts (refused when the conversation, the client's IP or the site has spent its budget)
and settled to the real figure when it ends, so concurrent turns cannot all pass and overspend.
"""

import ipaddress
import time
from dataclasses import dataclass

from django.conf import settings

from agent.shared import state

WINDOW = 60  # seconds: the "per minute" of the message limits
DAY = 24 * 3600


@dataclass(frozen=True)
class Refusal:
    message: str
    retry_after: int
    reason: str = ""  # which limit: session, ip, *_budget (the refusals metric's label)


def address_bucket(client_ip: str) -> str:
    """The key one visitor's address counts under.

    An IPv6 visitor is given a whole /64 (often far more) and may use any address in it, so
    limits count the /64; an IPv4-mapped IPv6 address is its IPv4 address.
    """
    try:
        address = ipaddress.ip_address(client_ip)
    except ValueError:
        return client_ip
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


async def message_allow(*, session_key: str, client_ip: str) -> Refusal | None:
    """Count one message against the per-session and per-IP limits; refuse when over."""
    client_ip = address_bucket(client_ip)
    window, retry_after = _minute()
    over = await state().hit(
        [
            (f"rl:s:{session_key}:{window}", settings.AGENT_MESSAGES_PER_MINUTE, WINDOW * 2),
            (f"rl:ip:{client_ip}:{window}", settings.AGENT_MESSAGES_PER_MINUTE_PER_IP, WINDOW * 2),
        ]
    )
    if over:
        return Refusal(
            f"Too many messages. Please wait {retry_after} s before asking again.",
            retry_after,
            ("session", "ip")[over - 1],
        )
    return None


async def feedback_allow(*, session_key: str) -> Refusal | None:
    """Count one vote against the session's AGENT_FEEDBACK_PER_MINUTE; refuse when over."""
    return await _per_minute(
        f"rl:fb:{session_key}",
        settings.AGENT_FEEDBACK_PER_MINUTE,
        "Too many votes. Please wait {retry_after} s before voting again.",
        "feedback",
    )


async def search_allow(*, client_ip: str) -> Refusal | None:
    """Count one public search against SEARCH_REQUESTS_PER_MINUTE_PER_IP; refuse when over."""
    return await _per_minute(
        f"rl:search:{address_bucket(client_ip)}",
        settings.SEARCH_REQUESTS_PER_MINUTE_PER_IP,
        "Too many searches. Please wait {retry_after} s.",
        "search",
    )


def _minute() -> tuple[int, int]:
    """The current one-minute window, and the seconds until the next one."""
    now = time.time()
    return int(now // WINDOW), max(1, int(WINDOW - now % WINDOW))


async def _per_minute(prefix: str, limit: int, message: str, reason: str) -> Refusal | None:
    window, retry_after = _minute()
    if await state().hit([(f"{prefix}:{window}", limit, WINDOW * 2)]):
        return Refusal(message.format(retry_after=retry_after), retry_after, reason)
    return None


async def budget_reserve(*, conversation_id: str | None, client_ip: str) -> Refusal | None:
    """Hold AGENT_TOKENS_RESERVE tokens on every budget the turn spends, or refuse the turn."""
    budgets = _budgets(conversation_id=conversation_id, client_ip=client_ip)
    over = await state().reserve(
        [(key, cap, ttl) for key, cap, ttl, _ in budgets], settings.AGENT_TOKENS_RESERVE
    )
    return budgets[over - 1][3] if over else None


async def budget_settle(
    *, conversation_id: str, reserved_for: str | None, client_ip: str, tokens: int
) -> None:
    """Replace the reservation with the tokens the turn really spent."""
    await state().add(
        budget_settlement(
            conversation_id=conversation_id,
            reserved_for=reserved_for,
            client_ip=client_ip,
            tokens=tokens,
        )
    )


def budget_settlement(
    *, conversation_id: str, reserved_for: str | None, client_ip: str, tokens: int
) -> list[tuple[str, int, int]]:
    """The (key, amount, ttl) changes that replace the reservation with the tokens spent."""
    reserve = settings.AGENT_TOKENS_RESERVE
    amounts = [
        (key, tokens - reserve, ttl)
        for key, _cap, ttl, _ in _budgets(conversation_id=reserved_for, client_ip=client_ip)
    ]
    if reserved_for is None:  # a new conversation: it had no budget key when the turn began
        amounts.append((f"tok:c:{conversation_id}", tokens, 7 * DAY))
    return [a for a in amounts if a[1]]


def _budgets(*, conversation_id: str | None, client_ip: str) -> list[tuple[str, int, int, Refusal]]:
    client_ip = address_bucket(client_ip)
    day = time.strftime("%Y-%m-%d", time.gmtime())
    tomorrow = int(DAY - time.time() % DAY)
    budgets = []
    if conversation_id is not None:
        budgets.append(
            (
                f"tok:c:{conversation_id}",
                settings.AGENT_TOKENS_PER_CONVERSATION,
                7 * DAY,
                Refusal(
                    "This conversation has used its token budget. Start a new chat.",
                    0,
                    "conversation_budget",
                ),
            )
        )
    budgets += [
        (
            f"tok:ip:{client_ip}:{day}",
            settings.AGENT_TOKENS_PER_IP_PER_DAY,
            2 * DAY,
            Refusal(
                "You have used today's budget. Please come back tomorrow.", tomorrow, "ip_budget"
            ),
        ),
        (
            f"tok:d:{day}",
            settings.AGENT_TOKENS_PER_DAY,
            2 * DAY,
            Refusal(
                "The assistant has used today's budget. Please come back tomorrow.",
                tomorrow,
                "daily_budget",
            ),
        ),
    ]
    return budgets
