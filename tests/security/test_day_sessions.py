"""An address opens no more new sessions a day than it may send messages a day.

A cookie-less chat request writes a session row before the message limits are checked, and new
sessions were counted by the minute alone: an address refused for the day (1,000 messages)
still wrote 30 rows a minute, 43,200 a day, each kept for SESSION_COOKIE_AGE (two weeks).
"""

import httpx
import pytest

from tests.security.clients import rows_now

pytestmark = pytest.mark.django_db(transaction=True)


def cookieless_asks(server, address: str, count: int) -> list[str]:
    """`count` cookie-less questions from `address` (behind the one trusted proxy); "hello", a
    turn the offline model answers at once (junk naming an unknown page writes no row, see
    test_junk_sessions.py). The last event's type or code of each."""
    endings = []
    body = {"content": "hello"}
    headers = {"Origin": server.url, "X-Forwarded-For": address}
    for _ in range(count):
        with httpx.Client(base_url=server.url, timeout=30) as client:
            answer = client.post("/api/chat", json=body, headers=headers)
            answer.raise_for_status()
            endings.append("rate_limited" if "rate_limited" in answer.text else "other")
    return endings


def test_an_address_refused_for_the_day_writes_no_more_sessions(serve):
    server = serve(
        "day-sessions",
        DJANGO_TRUSTED_PROXIES="1",
        AGENT_MESSAGES_PER_MINUTE_PER_IP="30",
        AGENT_MESSAGES_PER_DAY_PER_IP="3",
    )

    endings = cookieless_asks(server, "192.0.2.20", 10)
    cookieless_asks(server, "192.0.2.21", 1)  # another address still opens one

    assert endings.count("rate_limited") == 7  # the day's messages refused, as before
    assert rows_now("sessions.Session") == 3 + 1  # before: 10 + 1, one per refused request


def test_the_64s_of_one_48_share_its_day_of_new_sessions(serve):
    server = serve(
        "day-sessions-48",
        DJANGO_TRUSTED_PROXIES="1",
        AGENT_MESSAGES_PER_MINUTE_PER_IP="30",
        AGENT_MESSAGES_PER_MINUTE_PER_NETWORK="60",
        AGENT_MESSAGES_PER_DAY_PER_IP="3",
        AGENT_MESSAGES_PER_DAY_PER_NETWORK="5",
    )

    for index in range(1, 5):
        cookieless_asks(server, f"2001:db8:c:{index:x}::1", 3)

    assert rows_now("sessions.Session") == 5  # before: 12, three for each of the four /64s
