"""A chat socket whose client sends nothing is closed after WEBSOCKET_IDLE_SECONDS, with 4010.

A client that answers pings (every browser does, by itself) kept its socket for daphne's
`websocket_timeout`, a day: a file descriptor, a consumer and a slot of its address's
connections for each tab left open. Idle now means no frame from the client and no answer
running; the socket is closed with 4010, which the panel does not reconnect on until the
reader sends something (tests/e2e). Against a live server, with a client that answers pings.
"""

import asyncio
import json

import pytest
from websockets.exceptions import ConnectionClosed

from tests.security.clients import ws_open

pytestmark = pytest.mark.django_db(transaction=True)

IDLE = 4010


async def closed_code(socket, timeout: float = 30) -> int:
    """The close code, once the server closes; the replies read meanwhile are dropped."""
    try:
        async with asyncio.timeout(timeout):
            while True:
                await socket.recv()
    except ConnectionClosed as exc:
        return exc.rcvd.code if exc.rcvd else 1006


def test_a_socket_that_only_answers_pings_is_closed_as_idle(serve):
    server = serve("idle-socket", WEBSOCKET_IDLE_SECONDS="2")

    async def scenario() -> int:
        socket = await ws_open(server)  # websockets answers pings, as a browser does
        await socket.ping()
        return await closed_code(socket)

    assert asyncio.run(scenario()) == IDLE  # before: open until daphne's day ran out
    assert "Traceback" not in server.output()


def test_a_socket_whose_reader_sends_frames_stays_open(serve):
    server = serve("idle-busy", WEBSOCKET_IDLE_SECONDS="3")

    async def scenario() -> tuple[int, int]:
        socket = await ws_open(server)
        answered = 0
        for _ in range(6):  # six seconds of frames, one a second: twice the idle time
            await socket.send(json.dumps({"type": "stop"}))
            if json.loads(await socket.recv())["type"] == "error":
                answered += 1
            await asyncio.sleep(1)
        code = await closed_code(socket)  # then silence: closed as idle
        return answered, code

    answered, code = asyncio.run(scenario())
    assert answered == 6
    assert code == IDLE
