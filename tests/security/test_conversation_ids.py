"""A conversation id that is present but not an id is refused, not read as "a new chat".

The socket read `conversation_id` as `frame.get("conversation_id") or None`: `0`, `false` and
`""` are falsy, so a message naming one started a new conversation in silence (a client with
a broken id lost its history without a word, and had a fresh conversation, with a fresh token
budget, for each message), and a number whose digits spell 32 hex digits was taken for that
UUID, where SSE's schema refuses a number. Only null, or no field, starts a new conversation.
"""

import pytest

from agent.frames import CONVERSATION_ID_INVALID
from tests.security.clients import rows, rows_now, sse_post, ws_ask, ws_open

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "What is reciprocal rank fusion?"
NOT_IDS = [0, False, "", True, "nope", [], {}, 12345678123456781234567812345678]


async def test_the_socket_refuses_an_id_that_is_not_one(serve):
    server = serve("conversation-ids")
    socket = await ws_open(server)

    for value in NOT_IDS:
        events = await ws_ask(socket, QUESTION, conversation_id=value)
        # Before: `start` of a new conversation for 0, false, "" and the number.
        assert len(events) == 1, (value, events)
        assert events[0]["type"] == "error" and events[0]["code"] == "bad_request", value
        assert events[0]["message"] == CONVERSATION_ID_INVALID
    assert await rows("agent.Conversation") == 0

    # Null, or no field at all, still starts one; the id it gets continues it.
    first = await ws_ask(socket, QUESTION, conversation_id=None)
    assert first[0]["type"] == "start" and first[-1]["type"] == "done", first[-1]
    again = await ws_ask(socket, QUESTION, conversation_id=first[0]["conversation_id"])
    assert again[0]["conversation_id"] == first[0]["conversation_id"] and again[0]["turn"] == 2
    fresh = await ws_ask(socket, QUESTION)
    assert fresh[0]["type"] == "start" and fresh[-1]["type"] == "done", fresh[-1]
    await socket.close()
    assert await rows("agent.Conversation") == 2


def test_sse_refuses_the_same_ids(serve):
    server = serve("conversation-ids-sse")
    for value in NOT_IDS:
        body = {"type": "message", "content": QUESTION, "conversation_id": value}
        response, events = sse_post(server, body)
        assert response.status_code == 200, (value, response.status_code)
        assert [event["code"] for event in events] == ["bad_request"], (value, events)
        assert events[0]["message"] == CONVERSATION_ID_INVALID
    assert rows_now("agent.Conversation") == 0
    _, events = sse_post(server, {"type": "message", "content": QUESTION, "conversation_id": None})
    assert events[0]["type"] == "start" and events[-1]["type"] == "done", events[-1]
