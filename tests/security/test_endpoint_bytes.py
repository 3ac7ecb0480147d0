"""A model endpoint that writes a lone surrogate as raw bytes (`\\xed\\xa0\\x80`, WTF-8: a
server that encodes each half of a split emoji on its own) must not cut the visitor's answer.

orjson refuses those bytes, Python's parser takes them with "surrogatepass", and only escaped
surrogates were scrubbed: the answer's text frame then failed to encode. Over the WebSocket
the turn ended without a last event (saved as cancelled, and every later message on the
socket was "busy"); over SSE the stream broke off with a traceback and the client waited.
"""

import json

import pytest
from channels.db import database_sync_to_async

from agent.models import Turn
from testing_support.model_server import ScriptedResponse, text_response
from tests.security.clients import sse_post, ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

SPLIT = "half \ufffd a pair"  # what the visitor reads: the lone half replaced


def wtf8_answer() -> ScriptedResponse:
    raw = b'{"choices":[{"index":0,"delta":{"content":"half \xed\xa0\x80 a pair"}}]}'
    usage = json.dumps({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
    finish = json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return ScriptedResponse(chunks=[raw, finish.encode(), usage.encode()])


async def test_over_the_websocket_the_answer_ends_and_the_socket_stays_usable(serve, scripted):
    scripted.enqueue(wtf8_answer(), text_response(["Next answer."]))
    server = serve("wtf8-ws", **model_env(scripted))
    socket = await ws_open(server)

    first = await ws_ask(socket, "tell me")
    second = await ws_ask(socket, "and more", conversation_id=first[0]["conversation_id"])
    await socket.close()
    server.stop()  # the saves have landed

    assert first[-1]["type"] == "done"
    assert "".join(e["content"] for e in first if e["type"] == "text") == SPLIT
    assert second[-1]["type"] == "done"  # not "busy" for the rest of the socket's life
    turns = await database_sync_to_async(list)(Turn.objects.order_by("index"))
    assert [(t.status, t.answer) for t in turns] == [("done", SPLIT), ("done", "Next answer.")]


def test_over_sse_the_stream_ends_with_its_last_event(serve, scripted):
    scripted.enqueue(wtf8_answer())
    server = serve("wtf8-sse", **model_env(scripted))

    response, events = sse_post(server, {"content": "tell me"})
    server.stop()

    assert response.status_code == 200 and events[-1]["type"] == "done"
    assert "".join(e["content"] for e in events if e["type"] == "text") == SPLIT
    assert "Traceback" not in server.output()


# Bytes that are no UTF-8 at all: a stray byte, an overlong "/" and a character cut short.
BROKEN = b"a \xff b \xc0\xaf c \xe4\xb8"


def broken_answer() -> ScriptedResponse:
    raw = b'{"choices":[{"index":0,"delta":{"content":"' + BROKEN + b' end"}}]}'
    finish = json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return ScriptedResponse(
        chunks=[b'{"choices":[{"index":0,"delta":{"content":"Start. "}}]}', raw, finish.encode()]
    )


async def test_bytes_that_are_not_utf8_are_replaced_and_the_answer_is_kept(serve, scripted):
    # Before: json.loads raised UnicodeDecodeError, read as a malformed reply: the turn ended
    # `model_error` after its first words, and what the model had written was lost.
    scripted.enqueue(broken_answer())
    server = serve("broken-utf8", **model_env(scripted))
    socket = await ws_open(server)

    events = await ws_ask(socket, "tell me")
    await socket.close()
    server.stop()

    assert events[-1]["type"] == "done", events[-1]
    answer = "".join(e["content"] for e in events if e["type"] == "text")
    assert answer.startswith("Start. a \ufffd b ") and answer.endswith(" c \ufffd end"), answer
    turns = await database_sync_to_async(list)(Turn.objects.all())
    assert [(t.status, t.answer) for t in turns] == [("done", answer)]
