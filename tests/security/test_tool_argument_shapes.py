"""Tool arguments with shapes JSON allows and the database does not."""

import pytest

from agent.models import ToolCall, Turn
from testing_support.model_server import text_response, tool_call_response
from tests.security.clients import sse_post
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    "arguments",
    [
        '{"\\u0000": 1, "\\ud800": 2, "query": "x"}',
        '{"query": "x", "limit": 1e400}',
        '{"query": "x", "limit": NaN}',
        '{"query": "x", "deep": ' + "[" * 20000 + "]" * 20000 + "}",
        # Within the parser's C limit and past Python's: the scrub after it raised instead.
        '{"query": "x", "deep": ' + "[" * 1200 + "]" * 1200 + "}",
    ],
    ids=["bad-keys", "infinity", "nan", "deep", "deep-parsed"],
)
def test_odd_arguments_never_lose_the_turn(serve, scripted, arguments):
    scripted.enqueue(
        tool_call_response([("c1", "search_knowledge_base", arguments)]),
        text_response(["An answer."]),
    )
    server = serve("odd-args", **model_env(scripted))

    response, events = sse_post(server, {"content": "Tell me"})
    server.stop()

    assert response.status_code == 200
    assert events[-1]["type"] == "done", events[-3:]
    turn = Turn.objects.get()
    assert turn.status == "done" and turn.answer == "An answer."
    assert ToolCall.objects.count() == 1
    assert "Traceback" not in server.output()
