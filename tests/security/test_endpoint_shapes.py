"""What a model endpoint sends is untrusted input too: a shape the protocol does not allow
must end the turn cleanly, never lose it, hold its locks or give tokens back.

A tool call whose id or name was not a string, or a usage count that was negative, a string or
past the database's integers, passed the adapter as sent: the turn ended, but its record could
not be built or stored, so it stayed `running`, and its conversation lock and session slot
were renewed for as long as the process lived (every later message: "answering in another
tab"). A negative count also settled the budgets below zero: tokens given back to the address
and the site.
"""

import pytest
from channels.db import database_sync_to_async

from agent.models import Turn
from testing_support.model_server import ScriptedResponse, raw_response, text_response
from tests.security.clients import ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)


def call(**fields) -> dict:
    fragment = {"index": 0, "id": "c1", "function": {"name": "list_articles", "arguments": "{}"}}
    fragment.update(fields)
    return {"tool_calls": [fragment]}


def answer(usage: dict) -> ScriptedResponse:
    return raw_response([{"content": "An answer."}], usage=usage)


USAGE = {"prompt_tokens": 10, "completion_tokens": 5}
REPLIES = {
    "number-id": raw_response([call(id=5)], usage=USAGE, finish="tool_calls"),
    "number-name": raw_response(
        [call(function={"name": 7, "arguments": "{}"})], usage=USAGE, finish="tool_calls"
    ),
    "object-name": raw_response(
        [call(function={"name": {"a": 1}, "arguments": "{}"})], usage=USAGE, finish="tool_calls"
    ),
    "negative-usage": answer({"prompt_tokens": -1_000_000, "completion_tokens": 5}),
    "text-usage": answer({"prompt_tokens": "12", "completion_tokens": 5}),
    "huge-usage": answer({"prompt_tokens": 10**30, "completion_tokens": 5}),
}


@pytest.mark.parametrize("reply", list(REPLIES))
async def test_an_odd_reply_ends_its_turn_saved_and_frees_the_conversation(serve, scripted, reply):
    scripted.enqueue(REPLIES[reply], text_response(["Answered."]), text_response(["Again."]))
    server = serve("endpoint-shapes", **model_env(scripted))
    socket = await ws_open(server)

    first = await ws_ask(socket, "list the articles")
    conversation = first[0]["conversation_id"]
    second = await ws_ask(socket, "and again", conversation_id=conversation)
    await socket.close()
    server.stop()  # the saves have landed

    assert first[-1]["type"] in {"done", "error"}
    # The next turn starts: no second ending (`internal`) of the first before it, no "busy".
    assert second[0]["type"] == "start" and second[-1]["type"] == "done", second
    turns = await database_sync_to_async(list)(Turn.objects.order_by("index"))
    assert len(turns) == 2 and "running" not in {t.status for t in turns}
    assert all(t.input_tokens >= 0 and t.output_tokens >= 0 for t in turns)
    assert "Traceback" not in server.output()
