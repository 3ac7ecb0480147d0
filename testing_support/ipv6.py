"""Connections from IPv6 addresses of a test's choosing, for the limits that count a prefix.

A visitor with a /64 (or a /48) may connect from any address in it, and a test must do the
same: many addresses of one /64, several /64s of one /48. Linux makes a whole prefix this
machine's with one `local` route on lo ("AnyIP"), and IP_FREEBIND lets a socket bind any
address in it. Adding the route needs root (CAP_NET_ADMIN); without it the tests skip. The
prefix is a random ULA /32 (RFC 4193 asks for random), removed when the block ends.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

IP_FREEBIND = 15  # <linux/in.h>; Python's socket module does not name it

_random = random.Random()  # noqa: S311 - spreading prefixes, not a secret


@contextmanager
def local_ipv6_prefix() -> Iterator[str]:
    """A /32 of addresses this machine owns while the block runs, as its first group
    ("fd5e"): the /32 is `fd5e::/32`, so its second group is zero ("fd5e::5" is one of its
    addresses), and every spelling nginx may write (RFC 5952's "::" in each place) occurs.

    Skips the test when the route cannot be added (not root, no `ip`, no IPv6)."""
    ip = shutil.which("ip", path="/usr/sbin:/usr/bin:/sbin:/bin")
    if os.geteuid() != 0 or ip is None or not socket.has_ipv6:
        pytest.skip("binding chosen IPv6 addresses needs root and iproute2 (a local route)")
    routes = [ip, "-6", "route", "show", "table", "all"]
    taken = subprocess.run(routes, capture_output=True)  # noqa: S603
    for _ in range(20):
        group = f"fd{_random.randrange(1, 256):02x}"  # never fd00: the CI's own network may be
        prefix = f"{group}::/32"
        if f"{group}:".encode() in taken.stdout:
            continue
        command = [ip, "-6", "route", "add", "local", prefix, "dev", "lo"]
        added = subprocess.run(command, capture_output=True)  # noqa: S603
        if added.returncode == 0:
            break
    else:
        pytest.skip("could not route an IPv6 prefix to lo")
    try:
        yield group
    finally:
        command = [ip, "-6", "route", "del", "local", prefix, "dev", "lo"]
        subprocess.run(command, capture_output=True, check=False)  # noqa: S603


def connect_from(source: str, port: int, host: str = "::1", timeout: float = 10) -> socket.socket:
    """A TCP connection to `host`:`port` from `source`, an address of a `local_ipv6_prefix`."""
    connection = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    connection.setsockopt(socket.SOL_IP, IP_FREEBIND, 1)
    connection.settimeout(timeout)
    try:
        connection.bind((source, 0))
        connection.connect((host, port))
    except OSError:
        connection.close()
        raise
    return connection
