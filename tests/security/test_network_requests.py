"""The /64s of one IPv6 /48 share its HTTP request bucket, as they share its other limits.

The request cap counted the /64 alone, so each of a /48's 65,536 /64s had a full bucket of
`HTTP_REQUEST_BURST_PER_IP` (100) requests at 10 a second: the cap that keeps one address from
holding a web process's event loop did not hold a /48, which a home or office connection is
routinely given. The /48 now has a bucket of its own, at four addresses' worth.
"""

import httpx
import pytest

from tests.security.test_request_rate import pipelined_statuses

pytestmark = pytest.mark.django_db(transaction=True)

BURST, NETWORK_BURST = 5, 8
WALKED = [f"2001:db8:d:{i:x}::1" for i in range(1, 5)]  # four /64s of 2001:db8:d::/48


def test_the_64s_of_one_48_share_a_request_bucket(serve):
    server = serve(
        "network-requests",
        DJANGO_TRUSTED_PROXIES="1",
        HTTP_REQUEST_BURST_PER_IP=str(BURST),
        HTTP_REQUESTS_PER_SECOND_PER_IP="0.01",
        HTTP_REQUEST_BURST_PER_NETWORK=str(NETWORK_BURST),
        HTTP_REQUESTS_PER_SECOND_PER_NETWORK="0.01",
    )

    statuses = [
        status
        for address in WALKED
        for status in pipelined_statuses(server.port, address, "/healthz", BURST)
    ]
    with httpx.Client(base_url=server.url, timeout=30) as client:
        ipv4 = [
            client.get("/healthz", headers={"X-Forwarded-For": "192.0.2.8"}).status_code
            for _ in range(BURST + 1)
        ]

    assert statuses.count(200) == NETWORK_BURST  # before: 20, a full burst for each /64
    assert statuses.count(429) == len(WALKED) * BURST - NETWORK_BURST
    assert ipv4 == [200] * BURST + [429]  # IPv4 has no network bucket of its own
