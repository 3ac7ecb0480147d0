"""A visitor who closes the chat while its answer is still on the way: no traceback, turn saved.

autobahn refuses to send on a socket from the moment the visitor's close frame arrives, and
daphne passes the disconnect on to the consumer only once the frames it has not sent yet are
out: on a slow link (or a client that stopped reading), seconds later. A frame the visitor sent
just before closing (a malformed one, a vote, Stop) was answered in between, and autobahn's
`Disconnected` ("Attempt to send on a closed protocol") escaped the consumer: daphne logged
"Exception inside application" with a traceback at ERROR, one per socket a client cared to
close that way, and the consumer ended without cancelling its turn.

Made for real: a client with a small receive buffer that stops reading while a long answer
streams, until the server's kernel buffer is full and daphne holds the rest; then the frame
and a close frame, in one write.
"""

import asyncio
import json
import socket
from pathlib import Path

import pytest
from channels.db import database_sync_to_async

from testing_support.model_server import text_response
from tests.security.clients import frame_length, masked_frame, masked_text_frame, ws_open_raw
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

# 6 MB of answer, more than the server's kernel takes for one socket (tcp_wmem's 4 MB at most),
# then the model's stream stays open: the turn is still running when the visitor leaves.
PIECE = "word " * 3200
PIECES = 400
BUDGETS = {  # an answer of 6 MB fits in the day
    "AGENT_TOKENS_PER_CONVERSATION": "1000000000",
    "AGENT_TOKENS_PER_DAY": "1000000000000",
    "AGENT_TOKENS_PER_IP_PER_DAY": "1000000000000",
}
GOING_AWAY = masked_frame((1001).to_bytes(2), opcode=0x8)  # a browser closing its tab


def send_queue(server_port: int, client_port: int) -> int:
    """Bytes the server's kernel holds for the client (unsent or unacknowledged), or -1."""
    local, remote = f":{server_port:04X}", f":{client_port:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1].endswith(local) and fields[2].endswith(remote):
            return int(fields[4].split(":")[0], 16)
    return -1


async def kernel_full(server_port: int, client_port: int, timeout: float = 60) -> None:
    """Wait until the server's kernel stops taking more for the client: from then on daphne
    keeps what the turn sends in its own buffer, and must send it before the close is heard."""
    seen: list[int] = []
    for _ in range(int(timeout / 0.2)):
        seen.append(send_queue(server_port, client_port))
        if len(seen) >= 4 and seen[-1] > 0 and len(set(seen[-4:])) == 1:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"the server's send queue never settled: {seen[-5:]}")


def first_event(raw: socket.socket) -> dict:
    """The first frame the server sent (`start`, under 126 bytes), read from `raw`."""
    buffer = b""
    while len(buffer) < 2 or len(buffer) < frame_length(buffer):
        buffer += raw.recv(1)  # no further: the rest stays unread, as on a slow link
    return json.loads(buffer[2:])


@database_sync_to_async
def turn_saved() -> tuple[str, int] | None:
    from agent.models import Turn

    turn = Turn.objects.exclude(status="running").first()
    return (turn.status, len(turn.answer)) if turn else None


@pytest.mark.parametrize(
    "frame",
    [
        b"{",  # malformed: answered with bad_request
        b'{"type": "feedback", "conversation_id": "%s", "turn": 1, "vote": "up"}',  # unfinished
        b'{"type": "stop"}',  # Stop: cancels, then answers cancelled
    ],
    ids=["malformed", "vote", "stop"],
)
async def test_a_frame_answered_after_the_visitor_closed_ends_the_socket_quietly(
    serve, scripted, frame: bytes
):
    scripted.enqueue(text_response([PIECE] * PIECES, hold=True))
    server = serve("closed-mid-answer", **model_env(scripted), **BUDGETS)
    raw = ws_open_raw(server.port, receive_buffer=4096)  # a slow link: read nothing from here
    raw.sendall(masked_text_frame(b'{"type": "message", "content": "Talk a lot"}'))
    start = first_event(raw)
    await kernel_full(server.port, raw.getsockname()[1])

    if b"%s" in frame:
        frame %= start["conversation_id"].encode()
    raw.sendall(masked_text_frame(frame) + GOING_AWAY)
    assert await scripted.wait_disconnected(timeout=30)  # the turn was cancelled
    for _ in range(600):  # a ceiling, not a wait: 10 s was near a loaded machine's save
        saved = await turn_saved()
        if saved:
            break
        await asyncio.sleep(0.1)
    raw.close()  # daphne hears of the close now
    await asyncio.sleep(2)  # daphne reaps (and logs) finished consumers once a second
    server.stop()

    assert saved is not None and saved[0] == "cancelled" and saved[1] > 0
    log = server.output()
    assert "Exception inside application" not in log  # before: with autobahn's Disconnected
    assert "Traceback" not in log
