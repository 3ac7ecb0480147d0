"""A request head line past 16 KB is answered (414 or 431) by `make run`'s daphne, not dropped.

Twisted's line reader closed the connection on a head line over its 16 KB without a word (a
browser shows "connection reset"; nginx answers such a request 400 or 414). The channel now
answers 414 for a request line and 431 for a header, with the pages' headers, JSON under /api/,
and closes. Against a live daphne.
"""

import json
import socket

import pytest

from tests.security.test_api_socket_refusals import refused

pytestmark = pytest.mark.django_db(transaction=True)

BIG = "a" * 21_000  # the round-24 finding: a ~21 KB header


def raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(4096):
            answer += chunk
    return answer


def test_a_head_line_past_16_kb_is_answered(serve):
    server = serve("oversized-heads")
    header = refused(server.port, "/", f"X-Big: {BIG}")
    api = refused(server.port, "/api/chat", f"X-Big: {BIG}")
    line = raw(server.port, f"GET /{BIG} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    many = "".join(f"X-Part-{n}: {'b' * 1000}\r\n" for n in range(20))  # 20 KB in all
    together = raw(server.port, f"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n{many}\r\n".encode())
    after = raw(
        server.port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )

    # Before: b"" for each, the connection closed with nothing sent.
    assert header[0] == "HTTP/1.1 431 Request Header Fields Too Large"
    assert header[1]["content-type"] == "text/plain; charset=utf-8"
    assert header[2] == b"The request's headers are larger than this server accepts.\n"
    assert header[1]["x-frame-options"] == "deny"  # the helper reads headers lowercased
    assert header[1]["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
    assert api[0] == "HTTP/1.1 431 Request Header Fields Too Large"
    assert json.loads(api[2])["detail"] == (
        "The request's headers are larger than this server accepts."
    )
    assert line.startswith(b"HTTP/1.1 414 URI Too Long\r\n"), line[:80]
    assert b"nosniff" in line.partition(b"\r\n\r\n")[0]
    # Each line under 16 KB, together over: Twisted's bare "400 Bad Request" and nothing more.
    assert together.startswith(b"HTTP/1.1 400 Bad Request\r\n"), together[:80]
    assert b"nosniff" in together and together.endswith(b"\r\n\r\nBad request.\n")
    assert after.startswith(b"HTTP/1.1 200")  # the server goes on serving
