"""/metrics through a proxy nobody configured as trusted is not a loopback scrape.

config/proxy.py drops X-Forwarded-For from peers that are not trusted proxies, so /metrics
used to see only the proxy's loopback address: `make run` behind someone's own reverse proxy,
without DJANGO_TRUSTED_PROXIES, served its metrics to the whole network.
"""

import httpx
import pytest

pytestmark = pytest.mark.django_db(transaction=True)

OUTSIDE = "203.0.113.7"


def test_a_scrape_forwarded_by_an_untrusted_proxy_is_refused(serve):
    server = serve("metrics-untrusted")

    forwarded = httpx.get(f"{server.url}/metrics", headers={"X-Forwarded-For": OUTSIDE})
    local = httpx.get(f"{server.url}/metrics")

    assert forwarded.status_code == 403
    assert local.status_code == 200


def test_a_scrape_through_a_trusted_proxy_is_judged_by_the_visitor(serve):
    server = serve("metrics-trusted", DJANGO_TRUSTED_PROXIES="1")

    outside = httpx.get(f"{server.url}/metrics", headers={"X-Forwarded-For": OUTSIDE})
    local = httpx.get(f"{server.url}/metrics", headers={"X-Forwarded-For": "127.0.0.1"})

    assert outside.status_code == 403
    assert local.status_code == 200


def test_a_scrape_relayed_to_the_trusted_proxy_from_loopback_is_refused(serve):
    # The cluster's nginx reached by a tunnel or another proxy on the same machine (ngrok, an
    # outer nginx) appends the loopback address it saw: the workers read 127.0.0.1, and served
    # /metrics to every visitor behind that tunnel.
    server = serve("metrics-relayed", DJANGO_TRUSTED_PROXIES="1")

    relayed = httpx.get(
        f"{server.url}/metrics", headers={"X-Forwarded-For": f"{OUTSIDE}, 127.0.0.1"}
    )
    local = httpx.get(f"{server.url}/metrics", headers={"X-Forwarded-For": "127.0.0.1"})

    assert relayed.status_code == 403
    assert local.status_code == 200


@pytest.mark.parametrize(
    "header",
    [{"Via": "1.1 tunnel"}, {"CF-Connecting-IP": OUTSIDE}, {"True-Client-IP": OUTSIDE}],
    ids=["via", "cf-connecting-ip", "true-client-ip"],
)
def test_a_scrape_through_a_proxy_that_names_no_address_is_refused(serve, header):
    # A proxy or tunnel on the same machine that says Via (or names the visitor in its own
    # header) talks from loopback for every visitor: the debug pages refused such requests,
    # and /metrics served them.
    server = serve("metrics-via")

    proxied = httpx.get(f"{server.url}/metrics", headers=header)
    local = httpx.get(f"{server.url}/metrics")

    assert proxied.status_code == 403
    assert local.status_code == 200
