"""Finding 2: a lone surrogate or NUL is refused at the edge, scrubbed from output, spooled."""

import json
import logging

import pytest

from agent.models import Conversation, ToolCall, Turn
from agent.services import SPOOL_NAME, TurnRecord, spool_append, spool_replay
from testing_support.model_server import text_response, tool_call_response
from tests.security.clients import rows, sse_post, ws_ask, ws_events, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

# Frames as an attacker writes them: JSON escapes that decode to what PostgreSQL can't hold.
BAD_FRAMES = [
    '{"type":"message","content":"lone \\ud800 surrogate"}',
    '{"type":"message","content":"low \\udfff half"}',
    '{"type":"message","content":"hi","page":"slug\\ud800"}',
    '{"type":"message","content":"hi","page":"nul\\u0000"}',
    '{"type":"message","content":"hi","conversation_id":"\\ud800"}',
    '{"type":"message","content":"hi","extra":{"\\ud800":"key"}}',
    '{"type":"feedback","conversation_id":"x","turn":1,"vote":"up","comment":"\\ud800"}',
]


async def test_invalid_unicode_over_websocket_is_a_bad_request_and_nothing_starts(serve):
    server = serve("surrogate-ws")
    socket = await ws_open(server)

    for frame in BAD_FRAMES:
        await socket.send(frame)
        refused = await ws_events(socket)
        assert [(e["type"], e.get("code")) for e in refused] == [("error", "bad_request")], frame
        assert "not valid Unicode text" in refused[0]["message"]
    answered = await ws_ask(socket, "still there?")  # the socket stays usable

    assert answered[0]["type"] == "start" and answered[-1]["type"] == "done"
    assert await rows("agent.Conversation") == 1  # only the good message's
    await socket.close()


def test_invalid_unicode_over_sse_is_a_bad_request_and_nothing_starts(serve):
    server = serve("surrogate-sse")

    for frame in BAD_FRAMES[:6]:
        response, events = sse_post(server, frame)
        assert response.status_code == 400, frame
        assert response.json()["code"] == "bad_request"
        assert "not valid Unicode text" in response.json()["detail"]
        assert events == []

    assert Conversation.objects.count() == 0


def test_model_and_tool_output_with_bad_characters_is_scrubbed_and_saved(serve, scripted):
    arguments = json.dumps({"query": "evil \ud800 \x00 query"})  # escaped inside the JSON
    scripted.enqueue(
        tool_call_response([("c1", "search_knowledge_base", arguments)]),
        text_response(["broken \ud800 half ", "and nul \x00 end"]),
    )
    server = serve("scrub", **model_env(scripted))

    response, events = sse_post(server, {"content": "Tell me"})

    assert response.status_code == 200
    assert events[-1]["type"] == "done"
    tool_start = next(e for e in events if e["type"] == "tool_start")
    assert tool_start["arguments"] == {"query": "evil \ufffd \ufffd query"}
    text = "".join(e["content"] for e in events if e["type"] == "text")
    assert text == "broken \ufffd half and nul \ufffd end"
    server.stop()  # drains the save
    turn = Turn.objects.get()
    assert turn.answer == text
    assert ToolCall.objects.get().arguments == {"query": "evil \ufffd \ufffd query"}


def test_the_spool_writer_never_raises_on_text_utf8_cannot_encode(settings, tmp_path, caplog):
    settings.AGENT_SPOOL_DIR = str(tmp_path)
    conversation = Conversation.objects.create(session_key="s" * 32)
    record = TurnRecord(
        turn_id="7b6f7c8e-5a43-4c1b-9a51-1d6d5f0c0a11",
        conversation_id=str(conversation.pk),
        session_key="s" * 32,
        index=1,
        user_message="question",
        status="done",
        started_at="2026-12-01T00:00:00+00:00",
        answer="half \ud800 of a pair",
        tool_calls=[],
    )

    with caplog.at_level(logging.ERROR):
        path = spool_append(record=record)

    assert path == tmp_path / SPOOL_NAME
    assert "half \ufffd of a pair" in path.read_text(encoding="utf-8")
    assert "cannot encode" in caplog.text
    assert spool_replay() == (1, 0, 0)
    assert Turn.objects.get().answer == "half \ufffd of a pair"
