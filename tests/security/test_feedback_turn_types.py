"""A vote's turn number is an integer over SSE as over the WebSocket.

The SSE body's schema coerced `"turn": true`, `"turn": "1"` and `"turn": 1.0` to 1, so a
client's boolean or string saved a vote on the conversation's first answer, while the
WebSocket refused the same frame with `bad_request`.
"""

import pytest

from tests.security.clients import sse_post

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("turn", [True, "1", 1.0])
def test_a_turn_that_is_not_an_integer_is_refused_over_sse(serve, turn):
    server = serve(f"feedback-turn-{type(turn).__name__}")
    response, events = sse_post(server, {"content": "What is reciprocal rank fusion?"})
    assert events[-1]["type"] == "done", events[-1]
    cookies = {"sessionid": response.cookies["sessionid"]}
    vote = {"type": "feedback", "conversation_id": events[0]["conversation_id"], "vote": "down"}

    _, refused = sse_post(server, {**vote, "turn": turn}, cookies=cookies)
    _, saved = sse_post(server, {**vote, "turn": 1}, cookies=cookies)

    assert refused == [
        {
            "type": "error",
            "code": "bad_request",
            "message": "The request's turn is not valid.",
            "articles": [],
        }
    ], refused  # before: feedback_saved for turn 1
    assert saved == [{"type": "feedback_saved", "turn": 1}]
