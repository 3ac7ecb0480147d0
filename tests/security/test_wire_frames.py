"""Frames the consumer never sees are counted too: pings, pongs and a message's continuations.

The consumer's frame limit counts messages and daphne's queue holds messages, but autobahn reads
every frame first. A socket sending empty continuation frames (6 bytes each: a message begun and
never finished) or pings (each answered with a pong) was never closed: 24 MB of continuations
took 18.6 CPU-seconds of the process's one event loop, and /healthz waited 2.5 s behind them.
Now a socket has WEBSOCKET_FRAMES_PER_MINUTE frames of any kind and is dropped past them.
"""

import socket
import time

import pytest

from tests.security.clients import frame_length, masked_frame, ws_open_raw

pytestmark = pytest.mark.django_db(transaction=True)

FLOOD = 200_000  # frames: 1.2 MB on the wire
LIMIT = 300  # WEBSOCKET_FRAMES_PER_MINUTE's default
CONTINUATION, TEXT, CLOSE, PING, PONG = 0x0, 0x1, 0x8, 0x9, 0xA


def answers_until_closed(
    raw: socket.socket, seconds: float, *, until: bytes = b""
) -> tuple[list[int], bool]:
    """Opcodes of the server's frames for up to `seconds` (or until a frame holds `until`);
    whether the connection ended (a close frame, EOF or a reset) by then."""
    raw.settimeout(1)
    buffer = b""
    opcodes: list[int] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            chunk = raw.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return opcodes, True
        if not chunk:
            return opcodes, True
        buffer += chunk
        while len(buffer) >= 2 and len(buffer) >= frame_length(buffer):
            frame, buffer = buffer[: frame_length(buffer)], buffer[frame_length(buffer) :]
            opcodes.append(frame[0] & 0x0F)
            if until and until in frame:
                return opcodes, False
        if CLOSE in opcodes:
            return opcodes, True
    return opcodes, False


def flood(server, frames: bytes) -> tuple[list[int], bool]:
    raw = ws_open_raw(server.port)
    try:
        try:
            raw.sendall(frames)  # never read while sending
        except (BrokenPipeError, ConnectionResetError):
            pass  # dropped mid-flood: what the answers below find
        return answers_until_closed(raw, seconds=20)
    finally:
        raw.close()


def test_a_ping_flood_is_dropped(serve):
    server = serve("pings")

    opcodes, ended = flood(server, masked_frame(opcode=PING) * FLOOD)

    assert ended  # before: every ping was answered and the socket stayed open
    assert opcodes.count(PONG) <= LIMIT


def test_a_message_that_never_ends_is_dropped(serve):
    server = serve("continuations")
    begun = masked_frame(b"{", opcode=TEXT, fin=False)

    more = masked_frame(opcode=CONTINUATION, fin=False)  # empty, and the message goes on

    _opcodes, ended = flood(server, begun + more * FLOOD)

    assert ended  # before: read to the end, and the socket stayed open


def test_pongs_past_the_limit_are_dropped(serve):
    server = serve("pongs", WEBSOCKET_FRAMES_PER_MINUTE="50")

    _opcodes, ended = flood(server, masked_frame(opcode=PONG) * FLOOD)

    assert ended


def test_a_question_still_gets_its_answer_within_the_limit(serve):
    server = serve("within")
    raw = ws_open_raw(server.port)
    try:
        question = b'{"type":"message","content":"What is pgvector?"}'
        raw.sendall(masked_frame(opcode=PING) * 100 + masked_frame(question))
        opcodes, ended = answers_until_closed(raw, seconds=30, until=b'"type":"done"')
    finally:
        raw.close()

    assert not ended
    assert opcodes.count(PONG) == 100
    assert TEXT in opcodes  # the answer's events


def unfinished_message(size: int) -> bytes:
    """The header of a text frame of `size` bytes that does not end its message."""
    return bytes([TEXT, 0x80 | 127]) + size.to_bytes(8) + bytes(4)  # a zero mask


def test_a_message_larger_than_the_chat_takes_is_not_held(serve):
    # daphne assembled messages of up to 1 MB, sixteen times what the chat accepts, and kept
    # an unfinished one for as long as the client answered pings: 55 sockets of one address
    # holding 1 MB each grew the server by 54 MB.
    server = serve("unfinished")
    before = server.rss_bytes()
    sockets = [ws_open_raw(server.port) for _ in range(40)]
    try:
        for raw in sockets:
            try:
                raw.sendall(unfinished_message(1_000_000) + b" " * 999_000)
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused while sending: what the answers below find
        ended = [answers_until_closed(raw, seconds=5)[1] for raw in sockets]
        grown = server.rss_bytes() - before
    finally:
        for raw in sockets:
            raw.close()

    assert all(ended)  # before: all 40 open, their megabytes kept
    assert grown < 20_000_000
