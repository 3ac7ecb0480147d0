"""A frame refused while an answer streams must not read as that answer's end.

The protocol ends a turn with exactly one `done` or `error`. A second question sent on a busy
socket (a double Enter in a client of one's own, a retry loop), a frame that is not JSON or a
binary frame was answered with a plain `error` (`busy`, `bad_request`) in the middle of the
running turn: a client that follows the protocol ended the answer there, and the answer that
went on streaming, charged and saved, reached nobody (the panel drops events with no turn
open). Refusing a vote had the same problem and is marked `"feedback": true`; these are now
marked `"refused": true`, and the answer's own ending is not.
"""

import asyncio
import json

import pytest

from tests.security.clients import ws_events, ws_open

pytestmark = pytest.mark.django_db(transaction=True)


async def test_frames_refused_during_an_answer_are_marked(serve):
    server = serve("refused-frames")
    socket = await ws_open(server)
    question = {"type": "message", "content": "What is reciprocal rank fusion?"}
    await socket.send(json.dumps(question))
    await socket.send(json.dumps(question))  # the same question again, before any answer
    await socket.send("not json")
    await socket.send(b"\x00binary")
    await socket.send(json.dumps({"type": "what"}))

    received, refusals = [], []
    while len(refusals) < 4 or not received or received[-1]["type"] not in {"done", "error"}:
        event = json.loads(await asyncio.wait_for(socket.recv(), 20))
        (refusals if event.get("refused") else received).append(event)

    assert [event["code"] for event in refusals] == ["busy"] + ["bad_request"] * 3
    assert all(event["type"] == "error" for event in refusals)
    # The first question's answer, whole: its start, its text and its one ending.
    assert received[0]["type"] == "start"
    assert any(event["type"] == "text" for event in received)
    assert received[-1]["type"] == "done", received[-1]

    # With no answer running, a refusal is the frame's own answer, unmarked as before, and a
    # question is answered on the same socket.
    await socket.send("not json")
    alone = await ws_events(socket)
    assert alone[-1]["code"] == "bad_request" and "refused" not in alone[-1]
    await socket.send(json.dumps(question))
    assert (await ws_events(socket))[-1]["type"] == "done"
    await socket.close()
