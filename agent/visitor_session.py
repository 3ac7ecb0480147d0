"""The visitor's session, written on the first chat message and not before.

Pages hand out a session key in the cookie without a row (config/middleware.py); the first
message saves a row under that key, so the WebSocket (which cannot set cookies) and later
page loads agree on the owner of the conversation.
"""

from collections.abc import Awaitable, Callable
from importlib import import_module

from django.conf import settings
from django.contrib.sessions.backends.base import CreateError, SessionBase

from agent import ratelimit
from agent.shared import Counter, state
from config.sessions import key_well_formed, session_digest, session_key_mint

# Called with the new session's digest ("" for a key not minted yet) before its row is written;
# raises to refuse the message (agent.turns.message_check_new_session).
BeforeWrite = Callable[[str], Awaitable[None]]


async def session_ensure(
    session: SessionBase,
    cookie_key: str | None,
    *,
    client_ip: str,
    before_write: BeforeWrite | None = None,
) -> str:
    """The session's digest (`session_digest`), with its row saved; a visitor without a cookie
    gets a new session. The digest is what the chat keeps and counts by, never the key.

    `cookie_key` is the key as the cookie carried it: a store that has been loaded (the
    WebSocket's auth middleware loads it) forgets a key it could not find. An address that
    opens more new sessions than it may send messages gets a key without a row.

    Raises:
        Whatever `before_write` raises (BadRequest), with no row written.
    """
    key = await _session_key_ensure(
        session, cookie_key, client_ip=client_ip, before_write=before_write
    )
    return session_digest(key)


async def _session_key_ensure(
    session: SessionBase,
    cookie_key: str | None,
    *,
    client_ip: str,
    before_write: BeforeWrite | None,
) -> str:
    key = cookie_key
    if key_well_formed(key):
        if await session.aexists(key):
            return key
        if not await _new_session_allowed(client_ip):
            return key
        if before_write is not None:
            await before_write(session_digest(key))
        store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=key)
        try:
            await store.asave(must_create=True)
        except CreateError:  # another socket of this visitor saved it first
            pass
        return key
    if not await _new_session_allowed(client_ip):
        return session_key_mint()
    if before_write is not None:
        await before_write("")
    # No usable cookie (a non-browser client): a fresh session, kept for this socket or response.
    session["chat"] = True  # marks it modified, so an HTTP response sets the cookie
    await session.asave()
    return session.session_key


def session_key_known(cookie_key: str | None) -> str:
    """The digest of the cookie's key when well formed, else "": for reads and votes, which
    need no new row."""
    return session_digest(cookie_key) if key_well_formed(cookie_key) else ""


async def _new_session_allowed(client_ip: str) -> bool:
    # Every new session comes with a first message, so an address may open as many a minute as
    # it may send messages. Past that its message is refused anyway, and the row (written
    # before the limits are checked) would only fill the table: cookie-less clients wrote one
    # per refused request. An IPv6 /48 likewise, as its messages are counted: by the /64
    # alone, ten /64s of one /48 wrote 300 rows in a minute the /48 could send 120 messages.
    counters: list[Counter] = list(
        ratelimit.address_counters(
            "rl:new",
            client_ip,
            settings.AGENT_MESSAGES_PER_MINUTE_PER_IP,
            settings.AGENT_MESSAGES_PER_MINUTE_PER_NETWORK,
        )
    )
    # And as many a day as it may send messages a day: counted by the minute alone, an address
    # whose messages were refused for the day still wrote 30 rows a minute (43,200 a day, each
    # kept for SESSION_COOKIE_AGE) against its 1,000 messages.
    day = ratelimit.address_counters(
        "rl:newday",
        client_ip,
        settings.AGENT_MESSAGES_PER_DAY_PER_IP,
        settings.AGENT_MESSAGES_PER_DAY_PER_NETWORK,
    )
    counters += [(key, limit, ratelimit.DAY) for key, limit in day]
    return not (await state().hit(counters, ratelimit.WINDOW)).over
