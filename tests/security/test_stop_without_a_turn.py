"""A Stop with no answer running is answered, and the answer cannot be taken for a turn's end.

`{"type": "stop"}` on a socket with no running turn (before any question, or just after an
answer ended: the visitor pressed Stop as `done` was on its way) got no reply at all: a client
that waits for the `cancelled` its Stop asks for waited for ever. It gets a `bad_request` now,
marked `"refused": true` as every frame refused during an answer is, so a client that follows
the protocol does not read it as the end of an answer (the panel ignores it).
"""

import asyncio
import json

import pytest

from agent.consumers import NOTHING_TO_STOP
from testing_support.model_server import text_response
from tests.security.clients import ws_ask, ws_first, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

STOP = json.dumps({"type": "stop"})
NOTHING = {
    "type": "error",
    "code": "bad_request",
    "message": NOTHING_TO_STOP,
    "articles": [],
    "refused": True,
}


async def test_a_stop_with_nothing_running_gets_a_refusal(serve, scripted):
    scripted.enqueue(text_response(["An answer."]))
    scripted.enqueue(text_response(["A long answer"] * 200, delay=0.05))
    server = serve("stop-without-a-turn", **model_env(scripted))
    socket = await ws_open(server)

    await socket.send(STOP)  # before any question
    assert await ws_first(socket, timeout=5) == NOTHING  # before: nothing, ever

    answered = await ws_ask(socket, "A question")
    assert answered[-1]["type"] == "done", answered[-1]
    await socket.send(STOP)  # just after the answer ended
    assert await ws_first(socket, timeout=5) == NOTHING

    # A Stop during an answer still ends it with `cancelled`, unmarked: that is its end.
    await socket.send(json.dumps({"type": "message", "content": "Another question"}))
    assert (await ws_first(socket))["type"] == "start"
    await socket.send(STOP)
    received = []
    while not received or received[-1]["type"] != "error":
        received.append(await ws_first(socket))
    assert received[-1]["code"] == "cancelled" and "refused" not in received[-1]
    # And nothing more: one answer to one Stop.
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(socket.recv(), 1)
    await socket.close()
