"""Who the cluster's nginx counts a request under, with and without a balancer in front of it.

By default nginx believes no header a visitor sends: it counts its direct peer, and appends that
peer to X-Forwarded-For for the web processes (which read the last entry, one trusted hop). A
balancer in front of nginx is every visitor's peer, so all of them shared one burst and one
connection cap there; nginx had no setting for it. `NGINX_REAL_IP_FROM` names the balancers:
nginx then reads the visitor from the address the balancer appended, and from no one else.
"""

import shutil
import socket

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.proxy import networks_parse
from docent.cluster import nginx_conf
from tests.security.test_proxy_connections import running_proxy, status_read

pytestmark = pytest.mark.skipif(
    not shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin"), reason="nginx is not installed"
)

BURST = 3
BALANCER = "127.0.0.2"
FORGED = {"X-Forwarded-For", "X-Real-IP", "Forwarded", "True-Client-IP", "CF-Connecting-IP"}


def _status(port: int, source: str, headers: dict[str, str] | None = None) -> int:
    lines = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    with socket.create_connection(("127.0.0.1", port), source_address=(source, 0)) as c:
        c.sendall(f"GET /ok HTTP/1.1\r\nHost: docent\r\n{lines}\r\n".encode())
        return status_read(c)


def _forwarded_for(head: bytes) -> str:
    for line in head.decode("latin-1").split("\r\n"):
        name, _, value = line.partition(":")
        if name.lower() == "x-forwarded-for":
            return value.strip()
    return ""


@pytest.fixture
def slow_refill(settings):
    settings.HTTP_REQUESTS_PER_SECOND_PER_IP = 1 / 60  # nginx's least: no refill meanwhile
    settings.HTTP_REQUESTS_PER_SECOND_PER_NETWORK = 1 / 60


def test_by_default_no_header_a_visitor_sends_changes_who_it_is(tmp_path, slow_refill):
    assert "real_ip" not in nginx_conf(
        prefix=tmp_path, web_ports=[1], host="127.0.0.1", port=2
    )  # nothing believed unless named
    with running_proxy(tmp_path, host="127.0.0.1", request_burst=BURST) as (port, upstream):
        statuses = [
            _status(port, "127.0.0.4", dict.fromkeys(FORGED, f"203.0.113.{n}"))
            for n in range(1, 3 * BURST)
        ]
        heads = list(upstream.heads)

    # A fresh address in every header each time, and still one visitor: the burst and the
    # request it starts from.
    assert statuses.count(200) == BURST + 1
    # The web processes read the last entry: the peer nginx saw, whatever was forged before it.
    assert heads and all(_forwarded_for(head).endswith(", 127.0.0.4") for head in heads)


def test_behind_a_named_balancer_each_visitor_has_its_own_allowance(
    tmp_path, slow_refill, settings
):
    settings.NGINX_REAL_IP_FROM = networks_parse(BALANCER)
    with running_proxy(tmp_path, host="127.0.0.1", request_burst=BURST) as (port, upstream):

        def through_balancer(visitor: str, forged: str = "") -> int:
            # The balancer appends the address it saw to whatever the visitor wrote.
            chain = f"{forged}, {visitor}" if forged else visitor
            return _status(port, BALANCER, {"X-Forwarded-For": chain})

        first = [through_balancer("203.0.113.5") for _ in range(BURST + 2)]
        # The same visitor forging another address before the balancer's entry: still itself.
        forging = [through_balancer("203.0.113.5", f"198.51.100.{n}") for n in range(3)]
        second = [through_balancer("203.0.113.6") for _ in range(BURST + 2)]
        # A peer that is not the balancer is not believed: counted as itself.
        direct = [_status(port, "127.0.0.7", {"X-Forwarded-For": f"192.0.2.{n}"}) for n in range(9)]
        heads = list(upstream.heads)

    assert first.count(200) == BURST + 1  # before: the balancer's one allowance for everyone
    assert forging.count(200) == 0
    assert second.count(200) == BURST + 1  # before: 0, the first visitor had used it up
    assert direct.count(200) == BURST + 1
    # The web processes (one trusted hop) read the visitor, not the balancer.
    assert {_forwarded_for(h).rsplit(", ", 1)[-1] for h in heads} == {
        "203.0.113.5",
        "203.0.113.6",
        "127.0.0.7",
    }


@pytest.mark.parametrize(
    "value", ["10.0.0.0/8; include /etc/passwd", "10.0.0.0/8\nworker_processes 64", "balancer"]
)
def test_a_balancer_that_is_not_a_network_never_reaches_nginxs_configuration(tmp_path, value):
    with pytest.raises(ValueError):
        networks_parse(value)
    with pytest.raises(ValueError):
        nginx_conf(prefix=tmp_path, web_ports=[1], host="127.0.0.1", port=2, real_ip_from=[value])


def test_the_setting_is_checked_when_the_settings_load(monkeypatch):
    import importlib

    import config.settings

    monkeypatch.setenv("NGINX_REAL_IP_FROM", "10.0.0.0/8; include /etc/passwd")
    try:
        with pytest.raises(ImproperlyConfigured, match="NGINX_REAL_IP_FROM"):
            importlib.reload(config.settings)
    finally:
        monkeypatch.delenv("NGINX_REAL_IP_FROM")
        importlib.reload(config.settings)
