"""A chunked request body is refused at its head, before Twisted decodes a chunk.

Twisted decodes each chunk in Python (about 5 µs): a body of one-byte chunks ("1\\r\\na\\r\\n")
cost 6 CPU-seconds per MB of body, one request to the 4 MB limit 23 CPU-seconds, and the
request cap never saw it (it counts requests once their body is in).
"""

import socket

import httpx
import pytest

pytestmark = pytest.mark.django_db(transaction=True)

BODY_BYTES = 256 * 1024  # one-byte chunks: 1.5 MB on the wire


def _chunked_post(port: int) -> bytes:
    """POST /api/chat with a body of one-byte chunks; the server's answer."""
    head = (
        f"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Origin: http://127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    ).encode()
    body = b"1\r\n \r\n" * BODY_BYTES + b"0\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        try:
            connection.sendall(head + body)
        except OSError:
            pass  # the server stopped reading: its answer is waiting
        return connection.recv(4096)


def test_a_body_of_one_byte_chunks_is_refused_at_its_head(serve):
    server = serve("chunked")
    before = server.cpu_seconds()

    answer = _chunked_post(server.port)

    spent = server.cpu_seconds() - before
    assert answer.startswith(b"HTTP/1.1 411 Length Required"), answer[:80]
    assert b"Connection: close" in answer
    assert spent < 0.5, f"{spent:.2f} CPU-seconds for one chunked request"  # was 1.5 or more
    # A body with its length is read as before, and answers keep their framing on a kept-alive
    # connection (a `chunked` method on the request once made every answer chunk-framed).
    with httpx.Client(base_url=server.url, timeout=30) as client:
        normal = client.post(
            "/api/chat", json={"content": "what is docent?"}, headers={"Origin": server.url}
        )
        probes = [client.get("/healthz").json() for _ in range(2)]
    assert normal.status_code == 200 and normal.text.startswith("data: ")
    assert '"type":"done"' in normal.text
    assert probes == [{"ok": True}] * 2


def _read_all(connection: socket.socket) -> bytes:
    chunks = []
    while data := connection.recv(4096):
        chunks.append(data)
    return b"".join(chunks)


@pytest.mark.parametrize(
    "framing",
    ["Transfer-Encoding: chunked", f"Content-Length: {5 * 1024 * 1024}"],  # over HTTP_MAX_BODY
)
def test_a_refused_body_gets_no_100_continue_after_its_refusal(serve, framing):
    # Twisted answers "Expect: 100-continue" after reading the length: it invited the body of
    # a request already refused, after the refusal, on a closing connection.
    server = serve("expect-continue")
    head = (
        f"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"Content-Type: application/json\r\n{framing}\r\nExpect: 100-continue\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        connection.sendall(head)
        answer = _read_all(connection)

    assert answer.startswith((b"HTTP/1.1 411", b"HTTP/1.1 413")), answer[:80]
    assert b"100 Continue" not in answer
