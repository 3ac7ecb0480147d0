"""A Stop while the adapter waits to ask the endpoint again charges no call.

The endpoint answered 503 (it billed nothing) and said to retry in 5 s; the visitor pressed Stop
in that pause. The turn was charged as a call stopped before its first word: its prompt and the
output cap, for an attempt that was never sent (red team 31's list).
"""

import asyncio
import json

import pytest

from testing_support.model_server import error_response, text_response
from tests.security.clients import ws_events, ws_first, ws_open
from tests.security.conftest import model_env
from tests.security.test_turn_budget import saved_tokens

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_stop_in_the_pause_before_a_retry_is_charged_nothing(serve, scripted):
    scripted.enqueue(error_response(503, retry_after=5), text_response(["never sent"]))
    server = serve("stop-in-retry-pause", **model_env(scripted))
    socket = await ws_open(server)

    await socket.send(json.dumps({"type": "message", "content": "tell me everything"}))
    assert (await ws_first(socket))["type"] == "start"
    while not scripted.requests:  # the first attempt is out; its 503 comes back at once
        await asyncio.sleep(0.05)
    await asyncio.sleep(1)  # well inside the 5 s pause
    await socket.send(json.dumps({"type": "stop"}))
    ending = (await ws_events(socket))[-1]
    await socket.close()
    server.stop()  # the saves have landed

    assert ending.get("code") == "cancelled"
    assert len(scripted.requests) == 1  # the retry was never sent
    assert await saved_tokens() == 0  # before: the prompt and the output cap
