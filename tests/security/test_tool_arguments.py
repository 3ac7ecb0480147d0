"""Tool arguments the model writes are untrusted input too (a visitor can dictate them)."""

import json

import pytest
from channels.db import database_sync_to_async

from agent.models import ToolCall, Turn
from testing_support.model_server import text_response, tool_call_response
from tests.security.clients import ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)


async def test_an_article_id_past_bigint_is_a_bad_argument_not_a_logged_failure(serve, scripted):
    # "Read article 10^30": PostgreSQL refused the number as an overflow, and the tool failure
    # was logged with a traceback for each such call.
    calls = [("c1", "get_article_detail", json.dumps({"article_id": 10**30}))]
    scripted.enqueue(tool_call_response(calls), text_response(["No such article."]))
    server = serve("huge-article-id", **model_env(scripted))
    socket = await ws_open(server)

    events = await ws_ask(socket, "read article 1000000000000000000000000000000")
    await socket.close()
    server.stop()

    call = await database_sync_to_async(ToolCall.objects.get)()
    turn = await database_sync_to_async(Turn.objects.get)()
    told = [m["content"] for m in scripted.requests[1]["messages"] if m["role"] == "tool"]
    assert not call.ok and "less than or equal" in call.error
    assert "less than or equal" in told[0]  # the model reads why, and can correct itself
    assert events[-1]["type"] == "done" and turn.status == "done"
    assert "Traceback" not in server.output()
