"""The visitor's session, written on the first chat message and not before.

Pages hand out a session key in the cookie without a row (config/middleware.py); the first
message saves a row under that key, so the WebSocket (which cannot set cookies) and later
page loads agree on the owner of the conversation.
"""

from importlib import import_module

from django.conf import settings
from django.contrib.sessions.backends.base import CreateError, SessionBase

from config.sessions import key_well_formed


async def session_ensure(session: SessionBase, cookie_key: str | None) -> str:
    """The session's key, with its row saved; a visitor without a cookie gets a new session.

    `cookie_key` is the key as the cookie carried it: a store that has been loaded (the
    WebSocket's auth middleware loads it) forgets a key it could not find.
    """
    key = cookie_key
    if key_well_formed(key):
        if await session.aexists(key):
            return key
        store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=key)
        try:
            await store.asave(must_create=True)
        except CreateError:  # another socket of this visitor saved it first
            pass
        return key
    # No usable cookie (a non-browser client): a fresh session, kept for this socket or response.
    session["chat"] = True  # marks it modified, so an HTTP response sets the cookie
    await session.asave()
    return session.session_key
