"""The /64s of one IPv6 /48 share its open connections, as they share its other limits.

daphne's socket counted `HTTP_CONNECTIONS_PER_IP` per /64 alone, so each of a /48's 65,536 /64s
could hold a full share: 1,200 idle connections from twelve /64s of one /48 used up a web
process's 1,024 file descriptors, and every other visitor's connection (and `/healthz`) was
dropped until they closed; a connect loop every `HTTP_HEAD_SECONDS` kept it so. The /48 now
has `HTTP_CONNECTIONS_PER_NETWORK` (four addresses' worth).

The live test connects from real addresses of a /48: the documentation prefix routed to this
machine for the test (root only; `IP_FREEBIND` lets a socket take any address in it).
"""

import socket

import httpx
import pytest

from tests.security.clients import connect_from

pytestmark = pytest.mark.django_db(transaction=True)

PER_IP, PER_NETWORK = 5, 8


def still_open(sock: socket.socket) -> bool:
    """The server kept the connection (one over a cap is closed as soon as it is accepted)."""
    sock.settimeout(1)
    try:
        return sock.recv(1) != b""
    except TimeoutError:
        return True
    except OSError:
        return False


def test_the_64s_of_one_48_share_its_open_connections(serve_any, routed_network):
    server = serve_any(
        "network-connections",
        HTTP_CONNECTIONS_PER_IP=str(PER_IP),
        HTTP_CONNECTIONS_PER_NETWORK=str(PER_NETWORK),
    )
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
