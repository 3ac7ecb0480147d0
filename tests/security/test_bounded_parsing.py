"""Finding 5d: frames and bodies have size and depth limits; over them is a bad_request."""

import asyncio
import json
import socket as sockets

import httpx
import pytest

from testing_support.model_server import text_response
from tests.security.clients import sse_post, ws_ask, ws_events, ws_first, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

DEEP = "[" * 2000 + "]" * 2000
EMOJI = "😀" * 20_000
SHALLOW_BUT_OVER = json.dumps({"type": "message", "content": "hi", "x": [[[[[[[[[[1]]]]]]]]]]})


async def test_deep_big_and_binary_frames_get_bad_request_and_the_socket_stays_usable(serve):
    server = serve("frames")
    socket = await ws_open(server)

    for frame, reason in [
        (DEEP, "nested deeper"),
        ('{"type":"message","content":' + DEEP + "}", "nested deeper"),
        (SHALLOW_BUT_OVER, "nested deeper"),
        (json.dumps({"type": "message", "content": "x" * 70_000}), "larger than"),
        # 80 kB in 20,000 characters: the cap counted characters, so 4 bytes each passed it.
        (
            json.dumps({"type": "message", "content": "hi", "x": EMOJI}, ensure_ascii=False),
            "larger",
        ),
        (b"\x00\x01binary", "not binary"),
    ]:
        await socket.send(frame)
        refused = await ws_events(socket)
        assert [(e["type"], e.get("code")) for e in refused] == [("error", "bad_request")]
        assert reason in refused[0]["message"]
    answered = await ws_ask(socket, "still there?")

    assert answered[-1]["type"] == "done"
    assert "Traceback" not in server.output()
    await socket.close()


def test_deep_and_big_bodies_get_400_bad_request(serve):
    server = serve("bodies")

    deep, _ = sse_post(server, '{"content":' + DEEP + "}")
    big, _ = sse_post(server, json.dumps({"content": "x" * 70_000}))
    broken, _ = sse_post(server, b'{"content": "\xff\xfe"}')

    assert (deep.status_code, deep.json()["code"]) == (400, "bad_request")
    assert "nested deeper" in deep.json()["detail"]
    assert (big.status_code, big.json()["code"]) == (400, "bad_request")
    assert (broken.status_code, broken.json()["code"]) == (400, "bad_request")
    assert "Traceback" not in server.output()


async def test_a_slow_partial_body_neither_starts_a_turn_nor_blocks_other_visitors(serve):
    # Slowloris on SSE: headers promise a body that trickles in and never completes.
    server = serve("slowloris")
    loop = asyncio.get_running_loop()
    slow = sockets.create_connection(("127.0.0.1", server.port))
    head = (
        "POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Origin: {server.url}\r\nContent-Length: 1000\r\n\r\n"
    )
    await loop.sock_sendall(slow, head.encode() + b'{"content": "')

    async with httpx.AsyncClient(base_url=server.url, timeout=20) as client:
        other = await client.post(
            "/api/chat", json={"content": "me first"}, headers={"Origin": server.url}
        )
    slow.close()

    assert '"type":"done"' in other.text
    assert '"conversation_id"' in other.text
    from tests.security.clients import rows

    assert await rows("agent.Conversation") == 1  # the trickling body started nothing


@pytest.mark.parametrize("vote", [["up"], {"up": 1}])
async def test_a_vote_that_is_not_text_is_a_bad_request_and_the_answer_goes_on(
    serve, scripted, vote
):
    # The vote was looked up in a dict: a list or an object raised TypeError, daphne logged a
    # traceback and closed the socket with 1011, cancelling the answer that was streaming.
    scripted.enqueue(text_response(["word "] * 20, delay=0.05))
    server = serve("vote-shape", **model_env(scripted))
    socket = await ws_open(server)
    await socket.send(json.dumps({"type": "message", "content": "Talk for a while"}))
    assert json.loads(await socket.recv())["type"] == "start"

    feedback = {"conversation_id": "00000000-0000-0000-0000-000000000001", "turn": 1}
    await socket.send(json.dumps({"type": "feedback", **feedback, "vote": vote}))
    received = [await ws_first(socket)]
    while received[-1]["type"] != "done" and received[-1].get("code") != "internal":
        received.append(await ws_first(socket))
    await socket.close()

    refused = [e for e in received if e.get("code") == "bad_request"]
    assert len(refused) == 1 and "vote must be" in refused[0]["message"]
    assert received[-1]["type"] == "done"  # the answer streamed on to its end
    assert "Exception inside application" not in server.output()
