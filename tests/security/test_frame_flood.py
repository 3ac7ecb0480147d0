"""A chat socket that floods frames is closed, not queued without end.

daphne reads a socket as fast as the client writes and puts every frame on the consumer's
queue, which has no bound. Tiny bad frames (`{}`, 8 bytes each) each cost a parse and an
answer; one socket sending 8 MB of them grew the server by 250 MB and kept it busy for
seconds after the client had gone, whether the client read its answers or not.
"""

import socket

import pytest
from websockets.exceptions import ConnectionClosed

from tests.security.clients import frame_length, masked_text_frame, ws_first, ws_open, ws_open_raw

pytestmark = pytest.mark.django_db(transaction=True)

FLOOD = 2000


def server_frames(raw: socket.socket, wanted: int) -> tuple[list[int], bool]:
    """Opcodes of the server's frames until `wanted` text frames or the connection's end;
    whether it ended (a close frame, EOF or a reset)."""
    buffer = b""
    opcodes: list[int] = []
    while opcodes.count(0x1) < wanted and 0x8 not in opcodes:
        while len(buffer) < 2 or len(buffer) < frame_length(buffer):
            try:
                chunk = raw.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                return opcodes, True
            buffer += chunk
        length = frame_length(buffer)
        opcodes.append(buffer[0] & 0x0F)
        buffer = buffer[length:]
    return opcodes, 0x8 in opcodes


def flood(server, frames: int) -> tuple[list[int], bool]:
    raw = ws_open_raw(server.port)
    try:
        raw.sendall(masked_text_frame(b"{}") * frames)  # never read while sending
        return server_frames(raw, wanted=frames)
    finally:
        raw.close()


def test_a_socket_over_its_frame_rate_is_closed(serve):
    # The queue's bound out of the way: this is the consumer's moving window alone.
    server = serve("frame-rate", AGENT_FRAMES_PER_MINUTE="100", WEBSOCKET_QUEUED_FRAMES="100000")

    opcodes, ended = flood(server, FLOOD)

    assert ended  # the server ended the connection...
    assert opcodes.count(0x1) <= 100  # ...once past the limit, not after answering them all


def test_a_socket_whose_frames_pile_up_unread_is_dropped(serve):
    # The rate limits out of the way: frames arrive faster than the consumer takes them.
    server = serve(
        "frame-queue",
        AGENT_FRAMES_PER_MINUTE="1000000",
        WEBSOCKET_FRAMES_PER_MINUTE="1000000",
        WEBSOCKET_QUEUED_FRAMES="64",
    )

    opcodes, ended = flood(server, 20 * FLOOD)

    assert ended
    assert opcodes.count(0x1) < 20 * FLOOD


async def test_the_frame_rate_close_says_why_and_logs_no_traceback(serve):
    # autobahn sends no protocol close code but 1000 for an application: asked for 1008, it
    # raised in the consumer, daphne logged a traceback at ERROR and the client read 1011.
    server = serve("frame-rate-close", AGENT_FRAMES_PER_MINUTE="3")
    chat = await ws_open(server)
    answered = 0

    with pytest.raises(ConnectionClosed) as closed:
        for _ in range(4):
            await chat.send("{}")
            assert (await ws_first(chat))["code"] == "bad_request"
            answered += 1

    assert answered == 3
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4008  # before: 1011
    assert "over 3 frames a minute" in server.output()
    assert "Traceback" not in server.output()
