"""A client at its connection cap cannot write a log line per refused connection.

Each connection over HTTP_CONNECTIONS_PER_IP was refused with a WARNING line of its own, and
costs the client only a handshake: one client holding its cap and reconnecting in a loop wrote
3,000 lines in 0.8 s (3,900 a second, about 1.2 GB of log an hour). A peer's refusals are now
one line per minute, saying how many, and the rest are counted in a last line when it leaves.
"""

import http.client
import socket

import pytest

from testing_support.waits import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

CAP, ATTEMPTS = 2, 1000


def held_open(port: int) -> http.client.HTTPConnection:
    """A kept-alive connection the server has certainly accepted: one request answered on it.

    A bare connect proved nothing: the server may not have accepted it yet, nor seen the close
    of the start-up check's connection, which then took a slot (the second held one refused).
    An answer on each means the server had handled every connection opened before them."""
    held = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    held.request("GET", "/healthz")
    reply = held.getresponse()
    reply.read()
    assert reply.status == 200 and reply.getheader("Connection", "").lower() != "close"
    return held


def test_refused_connections_are_logged_once_a_minute_with_their_count(serve):
    # The held connections' idle deadline (HTTP_HEAD_SECONDS, 20 s) well past the loop's time
    # on a loaded machine: closed mid-loop, they would let the next connection in.
    server = serve("refused-log", HTTP_CONNECTIONS_PER_IP=str(CAP), HTTP_HEAD_SECONDS="300")
    held = [held_open(server.port) for _ in range(CAP)]

    for _ in range(ATTEMPTS):
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as refused:
            assert refused.recv(1) == b""  # closed at once: refused
    for connection in held:
        connection.close()

    def said() -> list[str]:
        return [
            line.split(" WARNING docent.http_guard: ")[1]
            for line in server.output().splitlines()
            if "docent.http_guard" in line
        ]

    # The last line is written once the server has seen both held connections close.
    wait_until(lambda: any("more connections" in line for line in said()), "the last line")
    assert said() == [  # before: 1,000 lines, one per refusal
        f"refused 1 connection: 127.0.0.1 already has {CAP} open",
        f"refused {ATTEMPTS - 1} more connections from 127.0.0.1",
    ]
