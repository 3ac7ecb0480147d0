"""The /64s of one IPv6 /48 share its open connections, as they share its other limits.

daphne's socket counted `HTTP_CONNECTIONS_PER_IP` per /64 alone, so each of a /48's 65,536 /64s
could hold a full share: 1,200 idle connections from twelve /64s of one /48 used up a web
process's 1,024 file descriptors, and every other visitor's connection (and `/healthz`) was
dropped until they closed; a connect loop every `HTTP_HEAD_SECONDS` kept it so. The /48 now
has `HTTP_CONNECTIONS_PER_NETWORK` (four addresses' worth).

The live test connects from real addresses of a /48: the documentation prefix routed to this
machine for the test (root only; `IP_FREEBIND` lets a socket take any address in it).
"""

import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
from django.db import connection

from testing_support.live_server import LiveServer, database_url

pytestmark = pytest.mark.django_db(transaction=True)

PER_IP, PER_NETWORK = 5, 8
NETWORK = "2001:db8:7::/48"
IP_FREEBIND = 15  # linux/in.h: bind an address no interface holds (yet)


@pytest.fixture
def routed_network() -> Iterator[str]:
    """NETWORK routed to loopback for the test's length, so its addresses can connect here."""
    ip = shutil.which("ip")
    if not sys.platform.startswith("linux") or ip is None:
        pytest.skip("needs Linux's ip(8) to route a test /48 to loopback")
    route = [ip, "-6", "route", "add", "local", NETWORK, "dev", "lo"]
    added = subprocess.run(route, capture_output=True, text=True, check=False)  # noqa: S603
    if added.returncode != 0 and "File exists" not in added.stderr:
        pytest.skip(f"cannot route {NETWORK} to loopback (root only): {added.stderr.strip()}")
    try:
        yield NETWORK
    finally:
        if added.returncode == 0:
            route[3] = "del"
            subprocess.run(route, capture_output=True, check=False)  # noqa: S603


def connect_from(address: str, port: int) -> socket.socket | None:
    sock = socket.socket(socket.AF_INET6)
    sock.setsockopt(socket.IPPROTO_IP, IP_FREEBIND, 1)
    sock.bind((address, 0))
    sock.settimeout(5)
    try:
        sock.connect(("::1", port))
    except OSError:
        sock.close()
        return None
    return sock


def still_open(sock: socket.socket) -> bool:
    """The server kept the connection (one over a cap is closed as soon as it is accepted)."""
    sock.settimeout(1)
    try:
        return sock.recv(1) != b""
    except TimeoutError:
        return True
    except OSError:
        return False


def test_the_64s_of_one_48_share_its_open_connections(routed_network, tmp_path):
    # `serve` listens on 127.0.0.1 alone; this server listens on every address (IPv6 too).
    env = {"HTTP_CONNECTIONS_PER_IP": str(PER_IP), "HTTP_CONNECTIONS_PER_NETWORK": str(PER_NETWORK)}
    url = database_url(connection.settings_dict["NAME"])
    command = [sys.executable, "manage.py", "serve", "--no-prepare", "--host", "::"]
    with LiveServer(
        "security-network-connections", url, env, tmp_path, command=[*command, "--port", "{port}"]
    ) as server:
        sockets = [
            connect_from(f"2001:db8:7:{net:x}::{n:x}", server.port)
            for net in range(1, 5)  # four /64s of the /48, PER_IP connections each
            for n in range(1, PER_IP + 1)
        ]
        held = [sock for sock in sockets if sock is not None and still_open(sock)]
        another_64 = connect_from("2001:db8:7:ff::1", server.port)
        refused = another_64 is None or not still_open(another_64)
        healthz = httpx.get(server.url + "/healthz", timeout=10)  # an IPv4 visitor
        for sock in [*held, another_64]:
            if sock is not None:
                sock.close()

    assert len(held) == PER_NETWORK  # before: 19 or 20, PER_IP for each /64
    assert refused
    assert healthz.status_code == 200


def test_a_48_is_capped_in_the_factory_too():
    # Twisted's own factory and addresses, no route needed: the rule where it is enforced.
    from twisted.internet.address import IPv4Address, IPv6Address
    from twisted.internet.protocol import Factory, Protocol

    from docent.http_guard import PeerLimitedFactory

    factory = PeerLimitedFactory(
        Factory.forProtocol(Protocol),
        per_peer=2,
        per_network=3,
        max_body=1024,
        exempt=lambda host: False,
    )

    def connect(host: str, kind=IPv6Address):
        return factory.buildProtocol(kind("TCP", host, 40000))

    walked = [connect(f"2001:db8:1:{n:x}::1") is not None for n in range(1, 6)]
    other_48 = connect("2001:db8:2:1::1")
    ipv4 = [connect("198.51.100.7", IPv4Address) is not None for _ in range(3)]

    assert walked == [True, True, True, False, False]
    assert other_48 is not None
    assert ipv4 == [True, True, False]  # IPv4 has no /48: its own cap only
    assert factory.open["net:2001:db8:1::/48"] == 3 and "net:198.51.100.7" not in factory.open
