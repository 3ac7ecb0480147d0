"""A model endpoint's stream line is bounded: a line that never ends is an invalid response.

The adapter joined its unfinished last line with each block read and split the whole again,
so a line that went on for megabytes cost the square of its length on the web process's one
event loop (96 MB: 23 CPU-seconds), all of it held in memory, and none of it counted against
the turn's budget: a chunk is a field the adapter ignores as easily as a delta.
"""

import pytest
from channels.db import database_sync_to_async

from agent.models import Turn
from testing_support.model_server import ScriptedResponse, text_response
from tests.security.clients import ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

PADDING = 8 * 1024 * 1024  # eight times the longest line read (MAX_LINE_BYTES)


def padded_then_answered() -> ScriptedResponse:
    """One well-formed chunk of 8 MB (a field nobody reads), then an ordinary answer."""
    answer = text_response(["Steps are capped."])
    padded = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "choices": []}
    padded["padding"] = "a" * PADDING
    return ScriptedResponse(chunks=[padded, *answer.chunks])


async def test_a_line_past_the_cap_ends_the_turn_as_an_invalid_response(serve, scripted):
    scripted.enqueue(padded_then_answered())
    server = serve("endpoint-lines", **model_env(scripted), AGENT_MODEL_MAX_RETRIES="0")
    socket = await ws_open(server)

    events = await ws_ask(socket, "Why cap the agent's steps?")
    await socket.close()
    server.stop()

    # Before: all 8 MB read (joined and split again per block read), then answered `done`.
    assert events[-1]["type"] == "error" and events[-1]["code"] == "model_error", events[-1]
    assert "Steps are capped." not in "".join(e.get("content", "") for e in events)
    [turn] = await database_sync_to_async(list)(Turn.objects.all())
    assert turn.status == "error"  # the turn is saved, not lost
