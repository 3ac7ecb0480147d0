"""One address's chat sockets share a frame allowance; a socket's own is not multiplied.

Each socket could send AGENT_FRAMES_PER_MINUTE (120), and an address may hold 100 sockets:
60 sockets of one address, each within its own allowance, sent 7,200 frames of 64 kB that
cost 49.9 CPU-seconds of the process's one event loop while /healthz waited up to 8 s. The
address now has AGENT_FRAMES_PER_MINUTE_PER_IP over all its sockets; past it a socket is
closed with 4008, as one over its own allowance is.
"""

import pytest
from websockets.exceptions import ConnectionClosed

from tests.security.clients import ws_first, ws_open

pytestmark = pytest.mark.django_db(transaction=True)

POLICY_VIOLATION = 4008


async def test_the_sockets_of_one_address_share_its_frame_allowance(serve):
    server = serve(
        "address-frames", AGENT_FRAMES_PER_MINUTE="5", AGENT_FRAMES_PER_MINUTE_PER_IP="12"
    )
    sockets = [await ws_open(server) for _ in range(5)]
    answered, closed = 0, []

    for socket in sockets:  # 4 frames each: within every socket's own 5
        try:
            for _ in range(4):
                await socket.send("{}")
                assert (await ws_first(socket))["code"] == "bad_request"
                answered += 1
        except ConnectionClosed as exc:
            closed.append(exc.rcvd.code if exc.rcvd else None)

    assert answered == 12  # before: 20, four times each of five sockets
    assert closed == [POLICY_VIOLATION] * 2
    assert "its address is over 12 frames a minute" in server.output()
    assert "Traceback" not in server.output()
    for socket in sockets:
        await socket.close()
