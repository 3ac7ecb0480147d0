"""A WebSocket frame the protocol refuses gets a close frame that says why, not a reset.

autobahn checks a text frame's UTF-8 as it arrives and, by default (`failByDrop`), answers a
violation by resetting the TCP connection: a client that sent invalid UTF-8 (a lone
surrogate's bytes, an overlong form, a stray \\xff), or a frame over the size limit, saw its
socket die with no close frame, no code and no reason, as if the server had crashed (1006 in a
browser). RFC 6455 gives each its code: 1007 for text that is not UTF-8, 1009 for a message too
large to take, 1002 for a broken frame. The close is sent, then the connection ends.
"""

import pytest

from tests.security.clients import frame_length, masked_frame, ws_open_raw
from tests.security.test_wire_frames import CLOSE, answers_until_closed

pytestmark = pytest.mark.django_db(transaction=True)


def close_of(raw) -> tuple[int | None, str]:
    """The code and reason of the server's close frame; (None, "") when it sent none."""
    raw.settimeout(10)
    buffer = b""
    try:
        while chunk := raw.recv(65536):
            buffer += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    while len(buffer) >= 2 and len(buffer) >= frame_length(buffer):
        frame, buffer = buffer[: frame_length(buffer)], buffer[frame_length(buffer) :]
        if frame[0] & 0x0F == CLOSE:
            body = frame[2:]
            return int.from_bytes(body[:2]), body[2:].decode("utf-8", "replace")
    return None, ""


@pytest.mark.parametrize(
    "text",
    [
        b'{"type": "message", "content": "\xff"}',  # no UTF-8 byte at all
        b'{"type": "message", "content": "\xc0\xaf"}',  # "/" in an overlong form
        b'{"type": "message", "content": "\xed\xa0\x80"}',  # a lone surrogate's bytes
        b'{"type": "message", "content": "\xf4\x90\x80\x80"}',  # past U+10FFFF
    ],
)
def test_text_that_is_not_utf8_is_closed_with_1007(serve, text):
    server = serve("invalid-utf8")
    raw = ws_open_raw(server.port)
    raw.sendall(masked_frame(text))

    code, reason = close_of(raw)
    raw.close()

    assert code == 1007  # before: None, the connection reset
    assert "UTF-8" in reason


def test_a_frame_over_the_size_limit_is_closed_with_1009(serve):
    server = serve("too-large", WEBSOCKET_MAX_MESSAGE_BYTES="1000")
    raw = ws_open_raw(server.port)
    # A text frame's header declaring 70,000 bytes (past the 1,000 allowed), masked.
    raw.sendall(bytes([0x81, 0x80 | 127]) + (70_000).to_bytes(8) + b"\x00" * 4)

    code, _ = close_of(raw)
    raw.close()

    assert code == 1009  # before: None


def test_a_valid_question_on_the_next_socket_is_answered(serve):
    server = serve("after-invalid")
    bad = ws_open_raw(server.port)
    bad.sendall(masked_frame(b'{"type": "message", "content": "\xff"}'))
    assert close_of(bad)[0] == 1007
    bad.close()

    good = ws_open_raw(server.port)
    good.sendall(masked_frame(b'{"type": "message", "content": "What is pgvector?"}'))
    opcodes, ended = answers_until_closed(good, seconds=30, until=b'"type":"done"')
    good.close()

    assert not ended and CLOSE not in opcodes
