"""The /64s of one IPv6 /48 share its allowance of new sessions, as they share its messages.

A cookie-less chat request writes a session row before the message limits are checked; an
address may open as many a minute as it may send messages. Counted by the /64 alone, ten
/64s of one /48 wrote 300 rows in a minute in which the /48 could send 120 messages, and a
/48 has 65,536 of them: the table grew as fast as the requests came. The /48 now opens at
most AGENT_MESSAGES_PER_MINUTE_PER_NETWORK new sessions a minute.
"""

import httpx
import pytest

from tests.security.clients import rows_now

pytestmark = pytest.mark.django_db(transaction=True)


def cookieless_asks(server, addresses: list[str]) -> None:
    """One cookie-less question per address (behind the server's one trusted proxy): "hello",
    which the offline model answers at once (an unknown page writes no row any more)."""
    body = {"content": "hello"}
    for address in addresses:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            headers = {"Origin": server.url, "X-Forwarded-For": address}
            client.post("/api/chat", json=body, headers=headers).raise_for_status()


def test_the_64s_of_one_48_share_its_new_sessions(serve):
    server = serve(
        "network-sessions",
        DJANGO_TRUSTED_PROXIES="1",
        AGENT_MESSAGES_PER_MINUTE_PER_IP="3",
        AGENT_MESSAGES_PER_MINUTE_PER_NETWORK="5",
    )

    cookieless_asks(server, [f"2001:db8:b:{i:x}::1" for i in range(1, 8) for _ in range(3)])
    from_48 = rows_now("sessions.Session")
    cookieless_asks(server, ["192.0.2.10"] * 4)  # IPv4 has no network count of its own

    assert from_48 == 5  # before: 21, three for each of the seven /64s
    assert rows_now("sessions.Session") == 5 + 3
