"""A chat handshake autobahn or daphne refuses (no key, a bad one, a protocol named twice, an
unknown version, a foreign Origin). The reason was the status line's phrase, quoting the
client's own bytes (`400 duplicate protocol "<b>x</b>" specified in …`), with none of the
headers every page carries and no body; now the standard phrase, those headers, and the reason
as a line of text."""

import socket

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

KEY = b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
REFUSED = {
    "no key": (b"", 400),
    "a bad key": (b"Sec-WebSocket-Key: <b>x</b>\r\n", 400),
    "a protocol named twice": (KEY + b"Sec-WebSocket-Protocol: <b>x</b>, <b>x</b>\r\n", 400),
    "an unknown version": (KEY + b"Sec-WebSocket-Version: 99\r\n", 400),
    # hybi draft 8 (2011), which autobahn speaks: switched (101) before red team 36
    "draft version 8": (KEY + b"Sec-WebSocket-Version: 8\r\n", 400),
    "a foreign origin": (KEY.replace(b"\r\n", b"\r\nOrigin: https://evil.example\r\n"), 403),
}


def _answer(port: int, headers: bytes) -> bytes:
    origin = b"" if b"Origin:" in headers else f"Origin: http://127.0.0.1:{port}\r\n".encode()
    version = b"" if b"Version:" in headers else b"Sec-WebSocket-Version: 13\r\n"
    head = (
        f"GET /ws/chat/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode()
        + origin
        + b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
        + version
        + headers
        + b"\r\n"
    )
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        while chunk := sock.recv(65536):
            received += chunk
    return received


def test_a_refused_handshake_is_a_plain_answer_with_the_pages_headers(serve):
    server = serve("handshake-refusals")
    answers = {name: _answer(server.port, headers) for name, (headers, _) in REFUSED.items()}
    server.stop()

    for name, answer in answers.items():
        head, body = answer.split(b"\r\n\r\n", 1)
        status, *lines = head.decode("latin-1").split("\r\n")
        code = REFUSED[name][1]
        assert status == f"HTTP/1.1 {code} {'Bad Request' if code == 400 else 'Forbidden'}", name
        fields = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines}
        assert fields["x-content-type-options"] == "nosniff", name
        assert fields["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
        assert fields["content-type"] == "text/plain; charset=utf-8", name
        assert int(fields["content-length"]) == len(body) > 1, name
    assert b"<b>x</b>" in answers["a protocol named twice"].split(b"\r\n\r\n", 1)[1]
    for name in ("an unknown version", "draft version 8"):
        assert "sec-websocket-version: 13\r\n" in answers[name].decode("latin-1").lower(), name
    assert "Traceback" not in server.output()
