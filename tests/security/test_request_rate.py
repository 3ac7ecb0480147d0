"""One address cannot flood a web process with plain HTTP requests.

The in-flight caps queue requests and never refuse one, and the probes are not counted there:
2,000 `GET /healthz` pipelined on one connection (94 kB sent) cost a web process 6.4
CPU-seconds, about 3 ms each through Django, every other visitor waiting on the same loop.
"""

import re
import socket

import httpx
import pytest

from tests.ops.prom import scrape, value
from tests.security.clients import connect_from

pytestmark = pytest.mark.django_db(transaction=True)

FLOODER = "203.0.113.9"  # behind the trusted proxy
BURST = 20
REQUESTS = 300


def pipelined_statuses(
    port: int, address: str, path: str, count: int, headers: str = ""
) -> list[int]:
    """`count` requests for `path` written at once on one connection (with `headers`, each
    line ending in CRLF); their statuses."""
    request = (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: {address}\r\n{headers}\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        connection.sendall(request * count)
        received = b""
        while received.count(b"HTTP/1.1 ") < count:
            chunk = connection.recv(65536)
            if not chunk:
                break
            received += chunk
    # A response follows the one before it with no line break between them.
    return [int(status) for status in re.findall(rb"HTTP/1\.1 (\d{3}) ", received)]


def test_an_address_past_its_burst_is_refused_and_others_are_not(serve):
    server = serve(
        "request-rate",
        DJANGO_TRUSTED_PROXIES="1",
        HTTP_REQUEST_BURST_PER_IP=str(BURST),
        HTTP_REQUESTS_PER_SECOND_PER_IP="0.5",
    )

    statuses = pipelined_statuses(server.port, FLOODER, "/healthz", REQUESTS)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        api = client.get("/api/articles", headers={"X-Forwarded-For": FLOODER})
        page = client.get("/", headers={"X-Forwarded-For": FLOODER})
        other = client.get("/", headers={"X-Forwarded-For": "198.51.100.4"})
        machine = [client.get("/healthz").status_code for _ in range(BURST + 10)]

    assert len(statuses) == REQUESTS  # every request answered, none dropped
    assert BURST <= statuses.count(200) <= BURST + 2  # the burst, and what refilled meanwhile
    assert statuses.count(429) == REQUESTS - statuses.count(200)
    assert api.status_code == 429 and api.json() == {
        "detail": "Too many requests from your address. Try again in a moment."
    }
    assert int(api.headers["Retry-After"]) >= 1
    assert page.status_code == 429 and page.headers["Content-Type"].startswith("text/plain")
    assert other.status_code == 200  # another address has a bucket of its own
    assert machine == [200] * (BURST + 10)  # loopback (probes, benches) is not counted
    refused = REQUESTS - statuses.count(200) + 2  # the flood's, the API call's and the page's
    assert (
        value(scrape(server.url), "docent_rate_limit_refusals_total", reason="http_rate") == refused
    )


def test_static_files_count_at_a_fraction_of_a_request(serve):
    # Served before the cap, static files were never counted: 2,000 pipelined
    # `GET /static/chat.css` cost a web process 2.7 CPU-seconds, and `/static/..%2fx` wrote a
    # WARNING line each. A static file now takes a quarter of a request from the bucket.
    server = serve(
        "request-rate-static",
        DJANGO_TRUSTED_PROXIES="1",
        HTTP_REQUEST_BURST_PER_IP=str(BURST),
        HTTP_REQUESTS_PER_SECOND_PER_IP="0.5",
    )

    statuses = pipelined_statuses(server.port, FLOODER, "/static/chat.css", REQUESTS)
    probes = pipelined_statuses(server.port, "203.0.113.10", "/static/..%2fconfig/x.py", REQUESTS)
    # A page and its assets, from an address of its own, all within the burst.
    visitor = "198.51.100.7"
    assets = ["/", "/static/site.css", "/static/chat.css", "/static/favicon.svg"]
    assets += [f"/static/chat/{name}.js" for name in ("panel", "connection", "markdown", "util")]
    page = [pipelined_statuses(server.port, visitor, path, 1)[0] for path in assets]

    served = statuses.count(200)
    assert len(statuses) == REQUESTS
    assert 4 * BURST <= served <= 4 * BURST + 4  # the burst at a quarter each, and the refill
    assert statuses.count(429) == REQUESTS - served
    assert probes.count(400) <= 4 * BURST + 4 and probes.count(429) >= REQUESTS - 4 * BURST - 4
    assert page == [200] * len(assets)


def handshake(port: int, origin: str, address: str = "") -> bytes:
    """One WebSocket handshake on a connection of its own; the status line of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        forwarded = f"X-Forwarded-For: {address}\r\n" if address else ""
        connection.sendall(
            (
                f"GET /ws/chat/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                f"Sec-WebSocket-Version: 13\r\nOrigin: {origin}\r\n{forwarded}\r\n"
            ).encode()
        )
        return connection.recv(64).split(b"\r\n", 1)[0]


def test_websocket_handshakes_spend_from_the_same_bucket(serve):
    # Refused handshakes (a foreign Origin, an address past its new sockets a minute) were
    # counted nowhere: 2,000 from one client cost 3.3 CPU-seconds, as fast as it sent them.
    server = serve(
        "request-rate-handshakes",
        DJANGO_TRUSTED_PROXIES="1",
        HTTP_REQUEST_BURST_PER_IP=str(BURST),
        HTTP_REQUESTS_PER_SECOND_PER_IP="0.5",
    )

    refused = [handshake(server.port, "http://evil.example", FLOODER) for _ in range(BURST)]
    page = httpx.get(server.url + "/", headers={"X-Forwarded-For": FLOODER}, timeout=30)
    own = handshake(server.port, server.url, FLOODER)
    other = handshake(server.port, server.url, "198.51.100.4")

    assert {status[:12] for status in refused} == {b"HTTP/1.1 403"}
    assert page.status_code == 429  # before: 200, the handshakes had taken nothing
    assert own.startswith(b"HTTP/1.1 403")  # even from its own origin, until the bucket refills
    assert other.startswith(b"HTTP/1.1 101")


def test_an_address_with_an_empty_bucket_has_its_new_connections_closed(serve_any, routed_network):
    # A refusal at the bucket cost about 1 ms of the event loop on a new connection (accepted,
    # parsed, through the ASGI call), and nothing bounds how fast a client connects: a new
    # connection per request refused at 0.95 ms each, a refused handshake at 1.2. While the
    # address's bucket is empty, its new connections are closed as they are accepted.
    server = serve_any(
        "request-rate-connections",
        HTTP_REQUEST_BURST_PER_IP="5",
        HTTP_REQUESTS_PER_SECOND_PER_IP="0.2",
    )

    answers = []
    for _ in range(40):
        connection = connect_from("2001:db8:7:1::1", server.port)
        if connection is None:
            answers.append(b"")
            continue
        with connection:
            try:
                connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: [::1]\r\n\r\n")
                answers.append(connection.recv(64).split(b"\r\n", 1)[0])
            except OSError:
                answers.append(b"")
    metrics = scrape(server.url)  # 127.0.0.1, ::ffff:127.0.0.1 on this socket: loopback too
    another = httpx.get(server.url + "/healthz", timeout=10)

    assert answers[:5] == [b"HTTP/1.1 200 OK"] * 5
    assert answers.count(b"") >= 33  # before: none, each a 429 (at most two as it refills)
    assert another.status_code == 200
    assert value(metrics, "docent_rate_limit_refusals_total", reason="http_rate") >= 35
