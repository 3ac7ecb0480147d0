"""Finding 1 and 5e: forged X-Forwarded-For / -Proto must not change who or how a client is."""

import httpx
import pytest

from tests.security.clients import same_minute, ws_ask, ws_open
from tests.security.conftest import PROD_KEY

pytestmark = pytest.mark.django_db(transaction=True)


async def starts(server, forwarded: list[str]) -> list[str]:
    """One cookie-less socket per X-Forwarded-For value; each asks once; the first event types."""
    same_minute()
    results = []
    for value in forwarded:
        socket = await ws_open(server, headers={"X-Forwarded-For": value})
        events = await ws_ask(socket, "hello")
        results.append(events[0].get("code", events[0]["type"]))
        await socket.close()
    return results


async def test_forged_forwarded_for_behind_one_proxy_cannot_dodge_the_ip_limit(serve):
    # The attack: the proxy appends the real peer (127.0.0.1) to what the client sent.
    server = serve("xff-hops", DJANGO_TRUSTED_PROXIES="1", AGENT_MESSAGES_PER_MINUTE_PER_IP="3")

    results = await starts(server, [f"10.9.{i}.{i}, 127.0.0.1" for i in range(6)])

    assert results == ["start"] * 3 + ["rate_limited"] * 3


async def test_forwarded_for_from_a_peer_that_is_not_a_proxy_is_ignored(serve):
    # No proxy configured: the header is the client's own invention.
    server = serve("xff-none", AGENT_MESSAGES_PER_MINUTE_PER_IP="2")

    results = await starts(server, ["203.0.113.1", "203.0.113.2", "203.0.113.3"])

    assert results == ["start", "start", "rate_limited"]


async def test_a_peer_outside_the_trusted_networks_is_not_believed(serve):
    # Only 10.0.0.0/8 is a proxy; the test client connects from 127.0.0.1.
    server = serve(
        "xff-foreign", DJANGO_TRUSTED_PROXIES="10.0.0.0/8", AGENT_MESSAGES_PER_MINUTE_PER_IP="1"
    )

    results = await starts(server, ["203.0.113.1", "203.0.113.2"])

    assert results == ["start", "rate_limited"]


async def test_real_proxies_still_tell_visitors_apart(serve):
    # The control: behind trusted proxies, two real visitors have two addresses.
    one_hop = serve("xff-real", DJANGO_TRUSTED_PROXIES="1", AGENT_MESSAGES_PER_MINUTE_PER_IP="1")
    networks = serve(
        "xff-nets",
        DJANGO_TRUSTED_PROXIES="127.0.0.1,10.0.0.0/8",
        AGENT_MESSAGES_PER_MINUTE_PER_IP="1",
    )

    assert await starts(one_hop, ["203.0.113.1", "203.0.113.2"]) == ["start", "start"]
    # Walked from the right past the trusted 10.0.0.7: the client is the address before it,
    # whatever the client wrote further left.
    chain = ["6.6.6.6, 203.0.113.9, 10.0.0.7", "7.7.7.7, 203.0.113.9, 10.0.0.7"]
    assert await starts(networks, chain) == ["start", "rate_limited"]


def production(serve, name: str, **env: str):
    return serve(
        name,
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY=PROD_KEY,
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        **env,
    )


def test_forwarded_proto_from_a_direct_client_does_not_skip_the_https_redirect(serve):
    server = production(serve, "proto-direct")

    with httpx.Client(base_url=server.url, follow_redirects=False) as client:
        response = client.get("/", headers={"X-Forwarded-Proto": "https"})

    assert response.status_code == 301
    assert response.headers["location"].startswith("https://")


def test_forwarded_proto_from_a_trusted_proxy_is_believed(serve):
    server = production(serve, "proto-proxy", DJANGO_TRUSTED_PROXIES="127.0.0.1")

    with httpx.Client(base_url=server.url, follow_redirects=False) as client:
        response = client.get("/", headers={"X-Forwarded-Proto": "https"})

    assert response.status_code == 200


async def test_forwarded_headers_apply_to_sse_too(serve):
    server = serve("xff-sse", AGENT_MESSAGES_PER_MINUTE_PER_IP="1")

    same_minute()
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
        codes = []
        for address in ["203.0.113.1", "203.0.113.2"]:
            headers = {"X-Forwarded-For": address, "Origin": server.url}
            response = await client.post("/api/chat", json={"content": "hi"}, headers=headers)
            client.cookies.clear()
            first = response.text.split("\n\n")[0]
            codes.append("start" if '"type":"start"' in first else first)

    assert codes[0] == "start"
    assert '"code":"rate_limited"' in codes[1]


async def test_an_ipv6_visitor_cannot_dodge_the_ip_limit_by_walking_its_own_slash_64(serve):
    # A home or cloud IPv6 link gets a /64: 2**64 addresses for one visitor. Through the
    # proxy each socket comes from another address of the same /64; then another /64 (a
    # different visitor) and an IPv4-mapped address of an IPv4 visitor already counted.
    server = serve("xff-ipv6", DJANGO_TRUSTED_PROXIES="1", AGENT_MESSAGES_PER_MINUTE_PER_IP="3")

    walked = await starts(server, [f"2001:db8:1:2::{i:x}" for i in range(1, 7)])
    other = await starts(server, ["2001:db8:1:3::1"])
    ipv4 = await starts(server, ["192.0.2.7"] * 3 + ["::ffff:192.0.2.7"])

    assert walked == ["start"] * 3 + ["rate_limited"] * 3
    assert other == ["start"]
    assert ipv4 == ["start"] * 3 + ["rate_limited"]


async def test_an_ipv6_visitor_cannot_multiply_its_allowance_across_the_64s_of_its_48(serve):
    # A connection routinely gets a /56 or a /48: each of its /64s was a fresh allowance.
    server = serve(
        "xff-ipv6-48",
        DJANGO_TRUSTED_PROXIES="1",
        AGENT_MESSAGES_PER_MINUTE_PER_IP="3",
        AGENT_MESSAGES_PER_MINUTE_PER_NETWORK="5",
    )

    walked = await starts(server, [f"2001:db8:7:{i:x}::1" for i in range(1, 8)])
    other = await starts(server, ["2001:db8:8:1::1"])  # another /48: another connection
    ipv4 = await starts(server, ["192.0.2.8"] * 4)  # IPv4 has no network count of its own

    assert walked == ["start"] * 5 + ["rate_limited"] * 2
    assert other == ["start"]
    assert ipv4 == ["start"] * 3 + ["rate_limited"]


async def test_ipv6_addresses_that_carry_an_ipv4_one_count_as_that_address(serve):
    # 6to4 (2002::/16) gives the holder of one IPv4 address a whole /48 (65,536 /64s), each a
    # fresh allowance when counted by its /64. Teredo (2001::/32) puts its server, not the
    # client, in the /64: every client of one Teredo server shared one allowance.
    server = serve("xff-embedded", DJANGO_TRUSTED_PROXIES="1", AGENT_MESSAGES_PER_MINUTE_PER_IP="3")

    walked = await starts(server, [f"2002:cb00:7107:{i:x}::1" for i in range(1, 5)])
    itself = await starts(server, ["203.0.113.7"])  # the same visitor over IPv4
    first = await starts(server, [teredo("65.54.227.120", "192.0.2.45")] * 3)
    second = await starts(server, [teredo("65.54.227.120", "198.51.100.9")])

    assert walked == ["start"] * 3 + ["rate_limited"]
    assert itself == ["rate_limited"]
    assert first == ["start"] * 3
    assert second == ["start"]  # another client of the same Teredo server


async def test_ipv4_visitors_behind_a_nat64_translator_are_told_apart(serve):
    # A NAT64 or SIIT translator in front of an IPv6-only site names every IPv4 visitor by an
    # address in 64:ff9b::/96 (RFC 6052), the IPv4 one in its last 32 bits: all of them in one
    # /64, so one visitor's flood used up the allowance of every IPv4 visitor of the site.
    server = serve("xff-nat64", DJANGO_TRUSTED_PROXIES="1", AGENT_MESSAGES_PER_MINUTE_PER_IP="3")

    flood = await starts(server, ["64:ff9b::cb00:7107"] * 4)  # 203.0.113.7
    others = await starts(server, ["64:ff9b::c000:22d", "64:ff9b::c633:6409"])
    itself = await starts(server, ["203.0.113.7"])  # the same visitor, not translated

    assert flood == ["start"] * 3 + ["rate_limited"]
    assert others == ["start", "start"]  # before: rate_limited, both
    assert itself == ["rate_limited"]


def teredo(server: str, client: str, port: int = 40000) -> str:
    """A Teredo address (RFC 4380): its server, and the client's address and port obscured."""
    import ipaddress

    value = (0x20010000 << 96) | (int(ipaddress.IPv4Address(server)) << 64) | (0x8000 << 48)
    value |= ((~port & 0xFFFF) << 32) | (~int(ipaddress.IPv4Address(client)) & 0xFFFFFFFF)
    return str(ipaddress.IPv6Address(value))
