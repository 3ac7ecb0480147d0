"""New chat sockets per client address, in a moving minute, refused at the handshake.

A connect/close loop from one address opened 300 sockets in 1.8 s, all accepted: each one a
consumer, a session lookup and a tick of the open-sockets gauge, with no message needed. The
panel connects when it is opened and reconnects with a growing delay, so a visitor opens a
few a minute; an address may open AGENT_SOCKETS_PER_MINUTE_PER_IP in any 60 s. Past that the
handshake gets 403 (before the session is looked up) and the panel's back-off takes over.
"""

from channels.security.websocket import WebsocketDenier

from agent.ratelimit import socket_allow
from ops.metrics import refusal_count


class WebsocketConnectLimit:
    """ASGI middleware for the websocket routes: count the connect before anything else runs."""

    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        client = scope.get("client") or ("", 0)
        if await socket_allow(client_ip=str(client[0])):
            return await self.application(scope, receive, send)
        refusal_count(reason="sockets", address=str(client[0]))
        return await WebsocketDenier()(scope, receive, send)
