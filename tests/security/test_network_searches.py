"""An IPv6 visitor's /48 cannot multiply its search allowance across its /64s.

Messages and tokens counted the /48 as well as the /64, but searches did not: each of a
/48's 65,536 /64s had the full allowance (60 a minute, three 500-character queries at about
1.3 CPU-seconds each), so one connection given a /48, as homes and offices routinely are,
could keep every core embedding. The /48 now has four addresses' worth of searches, over the
public API and the model's own searches alike (the same allowance).
"""

import httpx
import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def searches(server, addresses: list[str]) -> list[int]:
    """One search from each address (behind the server's one trusted proxy): the statuses."""
    with httpx.Client(base_url=server.url, timeout=30) as client:
        return [
            client.get(
                "/api/search", params={"q": "pgvector"}, headers={"X-Forwarded-For": address}
            ).status_code
            for address in addresses
        ]


def test_the_64s_of_one_48_share_a_search_allowance(serve):
    server = serve(
        "network-searches",
        DJANGO_TRUSTED_PROXIES="1",
        SEARCH_REQUESTS_PER_MINUTE_PER_IP="3",
        SEARCH_REQUESTS_PER_MINUTE_PER_NETWORK="5",
    )

    walked = searches(server, [f"2001:db8:9:{i:x}::1" for i in range(1, 8)])
    other = searches(server, ["2001:db8:a:1::1"])  # another /48: another connection
    ipv4 = searches(server, ["192.0.2.9"] * 4)  # IPv4 has no network count of its own

    assert walked == [200] * 5 + [429] * 2  # before: 200 for all seven
    assert other == [200]
    assert ipv4 == [200] * 3 + [429]
