"""One model reply cannot make the server run hundreds of tools, nor record thousands.

A visitor can ask the model to "search for each of these 200 words at once": the reply was
200 parallel tool calls and all of them ran (each search embeds its query), so one chat message
cost as much CPU as 200 calls of the public search API, which is limited per minute. Past the
run cap every call was still recorded, shown and answered: at ~10 tokens a call, one reply
within a turn's budget could be 5,000 saved rows. Only the first MAX_CALLS_KEPT are kept.
"""

import json

import pytest
from channels.db import database_sync_to_async

from agent.loop import MAX_CALLS_KEPT
from agent.models import ToolCall, Turn
from testing_support.model_server import text_response, tool_call_response
from tests.security.clients import ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

FANOUT = 200
assert FANOUT > MAX_CALLS_KEPT


async def test_a_reply_with_hundreds_of_tool_calls_runs_only_a_few(serve, scripted):
    calls = [
        (f"c{n}", "search_knowledge_base", json.dumps({"query": f"word number {n}"}))
        for n in range(FANOUT)
    ]
    scripted.enqueue(tool_call_response(calls), text_response(["Done."]))
    server = serve("tool-fanout", AGENT_MAX_TOOL_CALLS="4", **model_env(scripted))
    socket = await ws_open(server)

    events = await ws_ask(socket, "search for each of these 200 words at once")
    await socket.close()
    server.stop()  # the saves have landed

    ran = await database_sync_to_async(ToolCall.objects.filter(executed=True).count)()
    recorded = await database_sync_to_async(ToolCall.objects.count)()
    second_prompt = scripted.requests[1]["messages"]
    answers = [m["content"] for m in second_prompt if m["role"] == "tool"]
    turn = await database_sync_to_async(Turn.objects.get)()

    echoed = next(m for m in second_prompt if m["role"] == "assistant")["tool_calls"]

    assert ran == 4 and recorded == MAX_CALLS_KEPT  # the kept calls are on the record, 4 ran
    assert len(answers) == len(echoed) == MAX_CALLS_KEPT  # the model hears of each call kept
    assert sum("not executed" in answer for answer in answers) == MAX_CALLS_KEPT - 4
    ends = [e for e in events if e["type"] == "tool_end"]
    assert len(ends) == MAX_CALLS_KEPT and sum(e["ok"] for e in ends) <= 4
    assert events[-1]["type"] == "done" and turn.status == "done"
