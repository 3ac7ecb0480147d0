"""A chat handshake whose Sec-WebSocket-Protocol holds a byte past ASCII writes no traceback.

daphne decodes that header as ASCII outside any guard (autobahn keeps the raw byte): each such
handshake was answered "500 Internal server error: 'ascii' codec can't decode byte 0xff…" and
logged a traceback at ERROR, before the application, and with it the request bucket, saw the
handshake. Any client could write the error log as fast as it opened connections.
"""

import base64
import os
import socket

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

HANDSHAKES = 20


def _handshake(port: int, protocols: bytes) -> bytes:
    """The status line of a chat handshake naming `protocols`."""
    key = base64.b64encode(os.urandom(16))
    head = (
        b"GET /ws/chat/ HTTP/1.1\r\n"
        + f"Host: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n".encode()
        + b"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        + b"Sec-WebSocket-Key: "
        + key
        + b"\r\nSec-WebSocket-Protocol: "
        + protocols
        + b"\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        return sock.recv(4096).split(b"\r\n", 1)[0]


def test_a_protocol_header_past_ascii_is_no_server_error(serve):
    server = serve("handshake-protocols")

    statuses = {_handshake(server.port, b"chat\xff") for _ in range(HANDSHAKES)}
    statuses |= {_handshake(server.port, "chat, ü€".encode()) for _ in range(HANDSHAKES)}
    plain = _handshake(server.port, b"chat")  # the control: an ASCII name, not one we speak
    server.stop()

    # Before: {"HTTP/1.1 500 Internal server error: 'ascii' codec can't decode …"}.
    assert statuses == {b"HTTP/1.1 101 Switching Protocols"}  # as if no protocol were named
    assert plain == b"HTTP/1.1 101 Switching Protocols"
    assert "Traceback" not in server.output() and "UnicodeDecodeError" not in server.output()
