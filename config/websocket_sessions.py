"""Channels' auth stack for WebSockets, without the session check on every frame sent.

Channels' `SessionMiddleware` wraps `send` so that an HTTP response can save the session and
set its cookie. A WebSocket message can do neither (only `http.response.start` saves), but the
wrapper still reads the lazy session's `modified` and `is_empty()` on every frame: about 8% of
a streaming web process's CPU (bench/chat_load.py --profile). Here the session is resolved the
same way and frames go straight to the server; the chat saves its session row explicitly
(agent/visitor_session.py).

A database that cannot be reached refuses the handshake (403) with one WARNING line, as a page
gets a 503 (config/outage.py): the visitor's session and user are read before the socket opens,
and an open panel retries every few seconds, each attempt an 80-line traceback in the log.
"""

import logging

from channels.auth import AuthMiddleware
from channels.middleware import BaseMiddleware
from channels.security.websocket import WebsocketDenier
from channels.sessions import CookieMiddleware, InstanceSessionWrapper, SessionMiddleware

from config.outage import OUTAGE, outage_reason
from ops.logs import log_text

logger = logging.getLogger("config.outage")


class WebsocketSessionMiddleware(SessionMiddleware):
    """`scope["session"]` as Channels gives it; `send` untouched."""

    async def __call__(self, scope, receive, send):
        wrapper = InstanceSessionWrapper(scope, send)
        await wrapper.resolve_session()
        return await self.inner(wrapper.scope, receive, send)


class WebsocketAuthMiddleware(AuthMiddleware):
    """Channels' `AuthMiddleware`; a database outage while it reads the user refuses the socket."""

    async def __call__(self, scope, receive, send):
        scope = dict(scope)
        self.populate_scope(scope)
        try:
            await self.resolve_scope(scope)
        except OUTAGE as exc:
            path, reason = log_text(scope.get("path", "")), log_text(outage_reason(exc))
            logger.warning("database unavailable for %s: %s", path, reason)
            return await WebsocketDenier()(scope, receive, send)
        return await BaseMiddleware.__call__(self, scope, receive, send)


def websocket_auth_stack(inner):
    """Channels' `AuthMiddlewareStack`, with the session and auth middleware above."""
    return CookieMiddleware(WebsocketSessionMiddleware(WebsocketAuthMiddleware(inner)))
