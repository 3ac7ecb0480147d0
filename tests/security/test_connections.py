"""Resource exhaustion at the socket: idle connections per address, and huge request bodies.

Without docent/http_guard.py one address could hold any number of half-sent requests or idle
WebSockets (each an open file; the process has a fixed number), and daphne would store a body
of any size in a temp file before Django saw a byte.
"""

import asyncio
import socket
import time

import httpx
import pytest
from websockets.exceptions import InvalidHandshake, InvalidMessage

from tests.security.clients import ws_ask, ws_open

pytestmark = pytest.mark.django_db(transaction=True)


def slowloris(port: int) -> socket.socket:
    """A connection that starts a request and never finishes its headers."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"GET /ws/chat/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def answers_once_freed(url: str, deadline: float = 30) -> httpx.Response:
    # The server frees a slot when it sees the close: retry until it has.
    stop = time.monotonic() + deadline
    while True:
        try:
            return httpx.get(url + "/healthz", timeout=5)
        except httpx.TransportError:
            if time.monotonic() > stop:
                raise
            time.sleep(0.2)


async def test_one_address_cannot_hold_more_than_its_share_of_connections(serve):
    server = serve("connections", HTTP_CONNECTIONS_PER_IP="12")

    half_sent = [slowloris(server.port) for _ in range(8)]
    idle = [await ws_open(server) for _ in range(4)]
    one_more = slowloris(server.port)
    with pytest.raises((InvalidHandshake, InvalidMessage, OSError)):
        await ws_open(server)
    refused = closed_by_server(one_more)
    for sock in [*half_sent, one_more]:
        sock.close()
    for socket_ in idle:
        await socket_.close()

    assert refused
    assert answers_once_freed(server.url).status_code == 200
    visitor = await ws_open(server)
    assert (await ws_ask(visitor, "what is docent?"))[-1]["type"] == "done"
    await visitor.close()


def _post_head(port: int, length: str | None, *, chunked: bool = False) -> bytes:
    head = f"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    head += f"Origin: http://127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
    head += "Transfer-Encoding: chunked\r\n" if chunked else f"Content-Length: {length}\r\n"
    return (head + "\r\n").encode()


def _send_until_refused(sock: socket.socket, chunk: bytes, total: int) -> bytes:
    sent = 0
    try:
        while sent < total:
            sock.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass  # the server stopped reading: its answer is waiting
    return sock.recv(4096)


def test_a_huge_request_body_is_refused_before_it_is_stored(serve):
    server = serve("bodies", HTTP_MAX_BODY_BYTES=str(1024 * 1024))

    declared = socket.create_connection(("127.0.0.1", server.port), timeout=20)
    declared.sendall(_post_head(server.port, str(10**12)))
    declared_answer = _send_until_refused(declared, b" " * 65536, 4 * 1024 * 1024)
    declared.close()

    chunked = socket.create_connection(("127.0.0.1", server.port), timeout=20)
    chunked.sendall(_post_head(server.port, None, chunked=True))
    piece = b" " * 65536
    frame = b"%x\r\n%s\r\n" % (len(piece), piece)
    chunked_answer = _send_until_refused(chunked, frame, 4 * 1024 * 1024)
    chunked.close()

    assert declared_answer.startswith(b"HTTP/1.1 413")
    # Refused earlier still: at its head, before a chunk is stored (test_chunked_bodies.py).
    assert chunked_answer.startswith(b"HTTP/1.1 411")
    normal = httpx.post(
        server.url + "/api/chat",
        json={"content": "what is docent?"},
        headers={"Origin": server.url},
        timeout=30,
    )
    assert normal.status_code == 200 and '"type":"done"' in normal.text
    # Written at the socket, outside Django, the refusal lacked the pages' security headers.
    refusal = _head_fields(declared_answer)
    page = httpx.get(server.url + "/", timeout=30).headers
    for name in ["x-content-type-options", "x-frame-options", "referrer-policy"]:
        assert refusal[name] == page[name], name
    assert refusal["cross-origin-opener-policy"] == page["cross-origin-opener-policy"]
    assert refusal["content-security-policy"].startswith("default-src 'none'")


def _head_fields(answer: bytes) -> dict[str, str]:
    head = answer.split(b"\r\n\r\n", 1)[0].decode("latin1").split("\r\n")[1:]
    fields = (line.partition(":") for line in head)
    return {name.lower(): value.strip() for name, _, value in fields}


def test_an_ipv6_client_cannot_multiply_its_connections_across_its_64():
    # The cap counted each address: a visitor given a /64 (2^64 addresses) connects from a
    # new one each time. Twisted's own factory and addresses; no IPv6 route needed.
    from twisted.internet.address import IPv4Address, IPv6Address
    from twisted.internet.protocol import Factory, Protocol

    from docent.http_guard import PeerLimitedFactory

    factory = PeerLimitedFactory(
        Factory.forProtocol(Protocol), per_peer=3, max_body=1024, exempt=lambda host: False
    )

    def connect(host: str, kind=IPv6Address) -> bool:
        return factory.buildProtocol(kind("TCP", host, 40000)) is not None

    same_64 = [connect(f"2001:db8:1:2::{n:x}") for n in range(1, 6)]
    other_64 = connect("2001:db8:1:3::1")
    mapped = [connect("::ffff:198.51.100.7"), connect("198.51.100.7", IPv4Address)]

    assert same_64 == [True, True, True, False, False]
    assert other_64 and mapped == [True, True]
    assert factory.open["198.51.100.7"] == 2  # the mapped address counts as its IPv4 one


def _trickle(sock: socket.socket, lines: int) -> bool:
    """Send a header line every 0.25 s; True when the server closed the connection first."""
    sock.settimeout(0.25)
    for n in range(lines):
        try:
            sock.sendall(b"X-Slow-%d: a\r\n" % n)
        except OSError:
            return True
        if closed_by_server(sock):
            return True
    return False


def test_a_request_head_sent_a_line_at_a_time_is_cut_off(serve):
    # Twisted's idle timer restarts on every byte: a header line every few seconds held the
    # connection for ever (per address up to the connection cap). Here the head has 2 s;
    # the trickle would take 30 s.
    server = serve("slow-head", HTTP_HEAD_SECONDS="2")

    first = slowloris(server.port)
    cut_first = _trickle(first, 120)
    kept_alive = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    kept_alive.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    answered = kept_alive.recv(4096)
    kept_alive.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the next, slowly
    cut_next = _trickle(kept_alive, 120)
    first.close()
    kept_alive.close()

    assert cut_first and cut_next
    assert answered.startswith(b"HTTP/1.1 200")
    assert "did not send a request head in time" in server.output()


def _trickle_body(sock: socket.socket, size: int) -> bool:
    """Send a body a byte every 0.25 s; True when the server closed the connection first."""
    sock.settimeout(0.25)
    for _ in range(size):
        try:
            sock.sendall(b"a")
        except OSError:
            return True
        if closed_by_server(sock):
            return True
    return False


def test_a_request_body_sent_a_byte_at_a_time_is_cut_off(serve):
    # Once a complete head was in, nothing timed the body: a byte every few seconds of a
    # declared body held the connection (and, past 100 kB, a temp file) for as long as the
    # client liked. Here the body has 2 s; the trickle would take 30 s.
    server = serve("slow-body", HTTP_HEAD_SECONDS="2", HTTP_BODY_SECONDS="2")
    head = (
        b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 120\r\n\r\n"
    )

    slow = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    slow.sendall(head)
    cut = _trickle_body(slow, 120)
    slow.close()
    # A body that comes at once, and a WebSocket (no body) left open past the deadline, are fine.
    whole = httpx.post(server.url + "/api/chat", content=b"{}", timeout=10)

    assert cut
    assert whole.status_code == 403  # answered (no Origin): the body reached the application
    assert "did not send a request body in time" in server.output()


async def test_a_websocket_outlives_the_body_deadline(serve):
    server = serve("socket-body", HTTP_BODY_SECONDS="1")
    socket_ = await ws_open(server)
    await asyncio.sleep(2)  # past the body deadline, which ended with the handshake's (empty) body
    events = await ws_ask(socket_, "what is pgvector?")
    await socket_.close()

    assert events[-1]["type"] == "done"


def test_a_connection_that_never_began_a_request_is_closed_without_a_warning(serve):
    """Chromium preconnects sockets it may never use, and keeps used ones open: on a first
    visit the console filled with 'did not send a request head in time' warnings."""
    server = serve("idle", HTTP_HEAD_SECONDS="1")

    unused = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    kept_alive = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    kept_alive.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    answered = kept_alive.recv(4096)
    closed = [closed_by_server(unused), _closed_after_reply(kept_alive)]
    unused.close()
    kept_alive.close()

    assert answered.startswith(b"HTTP/1.1 200")
    assert closed == [True, True]  # both are still closed after the head's time
    assert "did not send a request head in time" not in server.output()


def _closed_after_reply(sock: socket.socket) -> bool:
    """Read past the rest of a response until the server closes the socket."""
    while True:
        try:
            if sock.recv(4096) == b"":
                return True
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False
