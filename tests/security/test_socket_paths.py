"""A WebSocket handshake on any path but the chat's is refused, not a server error.

Channels' router raised "No route found" for `/ws/chat` (no slash), `/`, `/admin/` or any
other path: daphne answered 500 and logged a traceback at ERROR for every such probe.
"""

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.security.clients import ws_ask, ws_open

pytestmark = pytest.mark.django_db(transaction=True)

PATHS = ["/ws/chat", "/ws/other/", "/", "/admin/", "/ws/chat/x", "/ws/chat/%ED%A0%80"]


async def test_sockets_to_unknown_paths_are_refused_at_the_handshake(serve):
    server = serve("socket-paths")
    base = f"ws://127.0.0.1:{server.port}"

    statuses = {}
    for path in PATHS:
        with pytest.raises(InvalidStatus) as refused:
            await connect(base + path, additional_headers={"Origin": server.url})
        statuses[path] = refused.value.response.status_code
    socket = await ws_open(server)  # the chat's own path still answers
    answered = await ws_ask(socket, "hello")
    await socket.close()

    assert statuses == dict.fromkeys(PATHS, 403)
    assert answered[0]["type"] == "start"
    assert "No route found" not in server.output()
