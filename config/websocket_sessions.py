"""Channels' auth stack for WebSockets, without the session check on every frame sent.

Channels' `SessionMiddleware` wraps `send` so that an HTTP response can save the session and
set its cookie. A WebSocket message can do neither (only `http.response.start` saves), but the
wrapper still reads the lazy session's `modified` and `is_empty()` on every frame: about 8% of
a streaming web process's CPU (bench/chat_load.py --profile). Here the session is resolved the
same way and frames go straight to the server; the chat saves its session row explicitly
(agent/visitor_session.py).
"""

from channels.auth import AuthMiddleware
from channels.sessions import CookieMiddleware, InstanceSessionWrapper, SessionMiddleware


class WebsocketSessionMiddleware(SessionMiddleware):
    """`scope["session"]` as Channels gives it; `send` untouched."""

    async def __call__(self, scope, receive, send):
        wrapper = InstanceSessionWrapper(scope, send)
        await wrapper.resolve_session()
        return await self.inner(wrapper.scope, receive, send)


def websocket_auth_stack(inner):
    """Channels' `AuthMiddlewareStack`, with the session middleware above."""
    return CookieMiddleware(WebsocketSessionMiddleware(AuthMiddleware(inner)))
