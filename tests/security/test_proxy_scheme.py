"""The scheme the cluster's nginx tells the web processes, behind a TLS terminator or not.

`NGINX_REAL_IP_FROM` is for a load balancer or TLS terminator in front of nginx, and nginx
then speaks plain HTTP to it. nginx still set `X-Forwarded-Proto $scheme`, overwriting the
terminator's `https` with `http`: the web processes (one trusted hop) took every visitor for a
plain-HTTP one. With DEBUG off each page answered 301 to the https:// address it was asked
for (a redirect loop), HSTS was never sent, and the chat and the admin's sign-in refused the
site's own https:// Origin. nginx now passes on the scheme a named balancer reports, and
still believes no visitor's.
"""

import shutil
import socket

import pytest

from config.proxy import networks_parse
from tests.security.test_proxy_connections import running_proxy, status_read

pytestmark = pytest.mark.skipif(
    not shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin"), reason="nginx is not installed"
)
BALANCER = "127.0.0.2"


def _proto_passed(port: int, upstream, source: str, proto: str | None) -> str:
    """The X-Forwarded-Proto the web process got for one request from `source`."""
    lines = "X-Forwarded-For: 203.0.113.5\r\n"
    if proto is not None:
        lines += f"X-Forwarded-Proto: {proto}\r\n"
    before = len(upstream.heads)
    with socket.create_connection(("127.0.0.1", port), source_address=(source, 0)) as c:
        c.sendall(f"GET /ok HTTP/1.1\r\nHost: docent\r\n{lines}\r\n".encode())
        assert status_read(c) == 200
    values = [
        line.split(":", 1)[1].strip()
        for line in upstream.heads[before].decode("latin-1").split("\r\n")
        if line.lower().startswith("x-forwarded-proto:")
    ]
    assert len(values) == 1, values  # one value: the web processes read no list of them
    return values[0]


def test_behind_a_tls_terminator_the_web_processes_hear_https(tmp_path, settings):
    settings.NGINX_REAL_IP_FROM = networks_parse(BALANCER)
    with running_proxy(tmp_path, host="127.0.0.1") as (port, upstream):
        seen = {
            "terminator, https": _proto_passed(port, upstream, BALANCER, "https"),
            "terminator, http": _proto_passed(port, upstream, BALANCER, "http"),
            "terminator, none": _proto_passed(port, upstream, BALANCER, None),
            "terminator, junk": _proto_passed(port, upstream, BALANCER, "https, http"),
            "visitor forging https": _proto_passed(port, upstream, "127.0.0.7", "https"),
        }

    assert seen == {
        "terminator, https": "https",  # before: "http", every visitor taken for plain HTTP
        "terminator, http": "http",
        "terminator, none": "http",  # nginx's own scheme
        "terminator, junk": "http",
        "visitor forging https": "http",  # not a balancer: not believed
    }


def test_without_a_balancer_no_visitor_names_the_scheme(tmp_path, settings):
    settings.NGINX_REAL_IP_FROM = ()
    with running_proxy(tmp_path, host="127.0.0.1") as (port, upstream):
        forged = _proto_passed(port, upstream, BALANCER, "https")
        plain = _proto_passed(port, upstream, BALANCER, None)

    assert (forged, plain) == ("http", "http")
