"""A visitor the trusted proxies could not name is not taken for the nearest proxy.

With `DJANGO_TRUSTED_PROXIES=2` (a load balancer in front of the cluster's nginx) the client is
the second address from the right. A visitor who reached nginx directly, past the balancer,
arrives with one entry (nginx's `$remote_addr`), and one whose outer entry is no address
(`unknown`, as some proxies write) with none at the client's place: both were taken for the
nearest proxy, which is on loopback. Loopback skips the request bucket and may read /metrics
and the debug pages, so such a visitor sent 130 requests without a refusal and read the
metrics (red team 38). Now the client is the outermost address a trusted proxy wrote.
"""

import httpx
import pytest

pytestmark = pytest.mark.django_db(transaction=True)

BURST = 20


def load_balanced_server(serve):
    return serve(
        "short-chains",
        DJANGO_TRUSTED_PROXIES="2",
        DJANGO_DEBUG="true",  # loopback would get Django's technical pages
        HTTP_REQUEST_BURST_PER_IP=str(BURST),
        HTTP_REQUESTS_PER_SECOND_PER_IP="1",
    )


@pytest.mark.parametrize(
    "forwarded_for",
    ["203.0.113.9", "unknown, 203.0.113.9"],
    ids=["past-the-balancer", "unknown-client"],
)
def test_a_visitor_the_balancer_did_not_name_is_no_loopback_client(serve, forwarded_for):
    server = load_balanced_server(serve)
    sent = {"X-Forwarded-For": forwarded_for}

    with httpx.Client(base_url=server.url, timeout=30) as client:
        metrics = client.get("/metrics", headers=sent)
        missing = client.get("/no-such-page/", headers=sent)
        statuses = [client.get("/healthz", headers=sent).status_code for _ in range(2 * BURST)]

    assert metrics.status_code == 403  # before: 200, the whole of /metrics
    assert "DEBUG = True" not in missing.text  # before: Django's technical 404
    assert 429 in statuses  # before: all 200, loopback never counts
    assert statuses.count(200) <= BURST + 2


def test_a_visitor_named_by_both_proxies_is_counted_as_before(serve):
    server = load_balanced_server(serve)
    sent = {"X-Forwarded-For": "198.51.100.4, 203.0.113.9"}  # the client, then the balancer

    with httpx.Client(base_url=server.url, timeout=30) as client:
        metrics = client.get("/metrics", headers=sent)
        statuses = [client.get("/healthz", headers=sent).status_code for _ in range(2 * BURST)]
        local = client.get("/metrics")  # a scraper on the host, straight to the web process

    assert metrics.status_code == 403
    assert 429 in statuses
    assert local.status_code == 200
