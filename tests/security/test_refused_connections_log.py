"""A client at its connection cap cannot write a log line per refused connection.

Each connection over HTTP_CONNECTIONS_PER_IP was refused with a WARNING line of its own, and
costs the client only a handshake: one client holding its cap and reconnecting in a loop wrote
3,000 lines in 0.8 s (3,900 a second, about 1.2 GB of log an hour). A peer's refusals are now
one line per minute, saying how many, and the rest are counted in a last line when it leaves.
"""

import socket
import time

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

CAP, ATTEMPTS = 2, 1000


def test_refused_connections_are_logged_once_a_minute_with_their_count(serve):
    server = serve("refused-log", HTTP_CONNECTIONS_PER_IP=str(CAP))
    held = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(CAP)]
    time.sleep(0.3)  # both accepted before the loop begins

    for _ in range(ATTEMPTS):
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as refused:
            assert refused.recv(1) == b""  # closed at once: refused
    for connection in held:
        connection.close()
    time.sleep(1)
    said = [
        line.split(" WARNING docent.http_guard: ")[1]
        for line in server.output().splitlines()
        if "docent.http_guard" in line
    ]

    assert said == [  # before: 1,000 lines, one per refusal
        f"refused 1 connection: 127.0.0.1 already has {CAP} open",
        f"refused {ATTEMPTS - 1} more connections from 127.0.0.1",
    ]
