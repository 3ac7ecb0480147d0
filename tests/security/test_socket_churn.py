"""A connect/close loop on the chat socket is cut off per address.

Before config/websocket_limit.py one address opened and closed 300 sockets in 1.8 s, all
accepted (a consumer, a session lookup and an open-sockets tick each, no message needed).
"""

import pytest
from websockets.exceptions import InvalidStatus

from tests.security.clients import ws_ask, ws_open

pytestmark = pytest.mark.django_db(transaction=True)


async def test_one_address_opening_sockets_in_a_loop_is_refused_at_the_handshake(serve):
    server = serve("socket-churn", AGENT_SOCKETS_PER_MINUTE_PER_IP="5", DJANGO_TRUSTED_PROXIES="1")

    for _ in range(5):
        socket = await ws_open(server)
        await socket.close()
    with pytest.raises(InvalidStatus) as refused:
        await ws_open(server)
    with pytest.raises(InvalidStatus):
        await ws_open(server)  # refusals are not counted, but they do not pass either
    # Another visitor, through the trusted proxy, opens a socket and is answered on it.
    elsewhere = await ws_open(server, headers={"X-Forwarded-For": "203.0.113.7"})
    answered = await ws_ask(elsewhere, "hello")
    await elsewhere.close()

    assert refused.value.response.status_code == 403
    assert answered[0]["type"] == "start" and answered[-1]["type"] in {"done", "error"}
    assert answered[-1].get("code") != "rate_limited"
