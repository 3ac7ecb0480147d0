"""The cluster's nginx counts an IPv6 visitor as the web processes do: by its /64, and its /48.

nginx keyed its connection cap and request rate on the visitor's whole address, so a visitor
with a /64 (every home connection has one, often a /56 or a /48) had a fresh cap and a fresh
burst from each new address. Its keys are read off the address's text by `map` blocks
(docent/templates/docent/nginx_visitors.conf): nginx has no mask operator, and an address has
several spellings within one prefix ("::" may stand for zeros inside it or after it).

Two ways in: an nginx that echoes the keys of any address it is told (its realip module, which
writes the address as nginx writes a peer's), for every place "::" may take; and the cluster's
nginx itself, from real IPv6 addresses of one /48 (testing_support/ipv6.py, root only).
"""

import ipaddress
import random
import shutil
import socket
import struct
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from docent.cluster import nginx_prepare, nginx_visitor_maps
from testing_support.ipv6 import connect_from, local_ipv6_prefix
from testing_support.live_server import free_port
from tests.security.test_proxy_connections import held_wait, running_proxy, status_read

NGINX = shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin")
pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx is not installed")

ECHO = """
pid {prefix}/nginx.pid;
error_log stderr warn;
events {{ }}
http {{
    access_log off;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
{maps}
    server {{
        listen 127.0.0.1:{port};
        set_real_ip_from 127.0.0.1;
        real_ip_header X-Visitor;
        location / {{ return 200 "$visitor_address|$visitor_network"; }}
    }}
}}
"""

# (address, its key, its network's key): each place "::" may start, and the addresses that
# carry an IPv4 address, as agent.ratelimit counts them.
SPELLINGS = [
    ("203.0.113.7", "203.0.113.7", ""),  # IPv4: itself, no network
    ("127.0.0.1", "", ""),  # this machine: not counted
    ("::1", "", ""),
    ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2", "2001:db8:1"),  # no "::"
    ("2001:db8:1:2::6", "2001:db8:1:2", "2001:db8:1"),  # "::" after the /64
    ("2001:db8:1::6", "2001:db8:1:0", "2001:db8:1"),  # after the third group
    ("2001:db8::6", "2001:db8:0:0", "2001:db8:0"),  # after the second
    ("2001:db8::1:0:0:6", "2001:db8:0:0", "2001:db8:0"),
    ("2001::6", "2001:0:0:0", "2001:0:0"),  # after the first: the fourth is zero too
    ("2001::4:5:6:7:8", "2001:0:0:4", "2001:0:0"),  # unless five groups follow
    ("0:1:2:3:4:5:6:7", "0:1:2:3", "0:1:2"),  # a lone zero is written out
    ("::ffff:203.0.113.7", "203.0.113.7", ""),  # IPv4-mapped: its IPv4 address
    ("64:ff9b::cb00:7107", "64:ff9b::cb00:7107", ""),  # NAT64: one IPv4 visitor each
    ("64:ff9b::1:cb00:7107", "64:ff9b:0:0", "64:ff9b:0"),  # outside NAT64's /96: native
    ("2002:cb00:7107:1::5", "2002:cb00:7107", "2002:cb00:7107"),  # 6to4: its /48 is 203.0.113.7
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:4136:e378", "2001:0:4136"),  # Teredo
    ("::2:3:4:5:6:7", "::", "::"),  # reserved: one key for all
    ("::203.0.113.7", "::", "::"),
]


@pytest.fixture(scope="module")
def echo(tmp_path_factory) -> Iterator[httpx.Client]:
    """An nginx with the cluster's maps, answering the keys of the address in X-Visitor."""
    prefix, port = tmp_path_factory.mktemp("echo") / "nginx", free_port()
    nginx_prepare(prefix)
    conf = prefix / "nginx.conf"
    conf.write_text(ECHO.format(prefix=prefix, port=port, maps=nginx_visitor_maps()))
    command = [NGINX, "-p", str(prefix), "-c", str(conf), "-e", "stderr", "-g", "daemon off;"]
    process = subprocess.Popen(command)  # noqa: S603
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            _wait_answering(client)
            yield client
    finally:
        process.terminate()
        process.wait(timeout=10)


def _wait_answering(client: httpx.Client) -> None:
    for _ in range(200):
        try:
            client.get("/")
            return
        except httpx.TransportError:
            time.sleep(0.05)
    raise RuntimeError("nginx did not start")


def keys(echo: httpx.Client, address: str) -> tuple[str, str]:
    address_key, network_key = echo.get("/", headers={"X-Visitor": address}).text.split("|")
    return address_key, network_key


@pytest.mark.parametrize("address, key, network", SPELLINGS)
def test_each_spelling_of_an_address_has_its_prefixs_key(echo, address, key, network):
    assert keys(echo, address) == (key, network)


def test_every_pattern_of_zero_groups_keys_the_64_and_the_48_written_out(echo):
    # Each of the 256 patterns of zero groups, twice: wherever nginx puts the "::", the key
    # is the prefix's groups written out, so no prefix has two keys (a fresh bucket per
    # spelling) and no two prefixes share one. An address that begins with "::" is reserved.
    draw = random.Random(48)  # noqa: S311 - reproducible addresses, not a secret
    wrong = []
    for pattern in range(256):
        for _ in range(2):
            groups = [0 if pattern >> i & 1 else draw.randrange(0x100, 0xFFFF) for i in range(8)]
            if groups[0]:  # not 2002 (6to4), 2001 (Teredo) or 64 (NAT64): ordinary unicast
                groups[0] = draw.randrange(0x2400, 0x2C00)
            address = str(ipaddress.IPv6Address(struct.pack("!8H", *groups)))
            wanted = ("::", "::") if address.startswith("::") else _written_out(groups)
            if keys(echo, address) != wanted:
                wrong.append((address, keys(echo, address), wanted))
    assert wrong == []


def _written_out(groups: list[int]) -> tuple[str, str]:
    return ":".join(f"{g:x}" for g in groups[:4]), ":".join(f"{g:x}" for g in groups[:3])


# The cluster's nginx itself, from real addresses.
PER_ADDRESS, PER_NETWORK = 2, 3
BURST, NETWORK_BURST = 3, 5


@pytest.fixture
def group() -> Iterator[str]:
    """The first group of an IPv6 /32 routed to this machine (`group::5` is one of its)."""
    with local_ipv6_prefix() as first:
        yield first


def _request(port: int, source: str, path: str) -> socket.socket:
    connection = connect_from(source, port)
    connection.sendall(f"GET {path} HTTP/1.1\r\nHost: docent\r\n\r\n".encode())
    return connection


def test_the_addresses_of_one_64_and_the_64s_of_one_48_share_the_connection_caps(
    tmp_path: Path, group: str
):
    limits = {"per_address": PER_ADDRESS, "per_network": PER_NETWORK}
    with running_proxy(tmp_path, host="::1", **limits) as (port, upstream):
        # Two spellings of one /64 (group:0:0:0): "::" after the first group, four follow.
        held = [
            _request(port, f"{group}::1", "/hold"),
            _request(port, f"{group}::1:2:3:4", "/hold"),
        ]
        held_wait(upstream, 2)
        same_64 = _request(port, f"{group}::5", "/ok")
        held.append(_request(port, f"{group}:0:0:1::1", "/hold"))  # another /64 of the /48
        held_wait(upstream, 3)
        # The same /64 (group:0:0:1) spelt with five groups after "::": the /48 is full.
        same_48 = _request(port, f"{group}::1:2:3:4:5", "/ok")
        other_48 = _request(port, f"{group}:0:1::1", "/ok")
        statuses = [status_read(c) for c in (same_64, same_48, other_48)]
        for connection in (*held, same_64, same_48, other_48):
            connection.close()

    assert statuses == [429, 429, 200]  # before: [200, 200, 200], a cap per address


def test_the_addresses_of_one_64_and_the_64s_of_one_48_share_the_request_bursts(
    tmp_path: Path, group: str, settings
):
    settings.HTTP_REQUESTS_PER_SECOND_PER_IP = 1 / 60  # nginx's least: no refill meanwhile
    settings.HTTP_REQUESTS_PER_SECOND_PER_NETWORK = 1 / 60
    limits = {"request_burst": BURST, "network_burst": NETWORK_BURST}
    with running_proxy(tmp_path, host="::1", **limits) as (port, _):

        def passed(sources: list[str]) -> int:
            """How many of `BURST + 1` requests from each source were let through."""
            statuses = []
            for source in sources:
                for _ in range(BURST + 1):
                    with _request(port, source, "/ok") as connection:
                        statuses.append(status_read(connection))
            return statuses.count(200)

        one_64 = passed([f"{group}:0:0:1::{n}" for n in (1, 2, 3)] + [f"{group}::1:2:3:4:5"])
        one_48 = passed([f"{group}:0:1:{n}::1" for n in (1, 2, 3, 4)])

    # nginx lets a burst through and the request it starts from: BURST + 1 from the /64.
    assert one_64 == BURST + 1  # before: 16, a burst per address
    assert one_48 == NETWORK_BURST + 1  # before: 16, a burst per /64
