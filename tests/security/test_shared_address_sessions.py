"""One address's day, shared by every reader behind it (an office's NAT): the trade-off pinned.

A cookie-less client naming conversations that are nobody's passed the message check, wrote a
session row and was refused `bad_request`. Since red team 36 no row is written for them
(test_junk_sessions.py), but they still count: first against the address's new sessions (capped
at its day of messages), then, once those are spent, against its day of messages: junk from
fresh cookies gets at most twice the day's refusals, and writes nothing. The price, by design,
is that a reader behind the same address shares that day: an attacker at the office's NAT who
sends its day locks the office's readers out until the first leaves the 24 h window (red team
35)."""

import uuid

import httpx
import pytest

from tests.security.clients import rows_now

pytestmark = pytest.mark.django_db(transaction=True)

OFFICE = "192.0.2.30"


def last_event(server, address: str, body: dict, cookies: dict | None = None) -> str:
    """POST a chat body from `address` (behind the one trusted proxy): the last event's line."""
    headers = {"Origin": server.url, "X-Forwarded-For": address}
    with httpx.Client(base_url=server.url, timeout=60, cookies=cookies) as client:
        return client.post("/api/chat", json=body, headers=headers).text.strip().splitlines()[-1]


def page_cookies(server, address: str) -> dict:
    """The cookie a reader's first page gives them (a key without a row)."""
    with httpx.Client(base_url=server.url, timeout=60) as client:
        client.get("/", headers={"X-Forwarded-For": address})
        return dict(client.cookies)


def test_junk_from_fresh_cookies_spends_the_addresss_day_and_no_more_rows(serve):
    server = serve(
        "shared-address",
        DJANGO_TRUSTED_PROXIES="1",
        AGENT_MESSAGES_PER_MINUTE_PER_IP="30",
        AGENT_MESSAGES_PER_DAY_PER_IP="3",
    )

    junk = [
        last_event(server, OFFICE, {"content": "hi", "conversation_id": str(uuid.uuid4())})
        for _ in range(9)
    ]
    colleague = last_event(
        server, OFFICE, {"content": "What is HNSW?"}, page_cookies(server, OFFICE)
    )
    elsewhere = last_event(server, "192.0.2.31", {"content": "What is HNSW?"})

    assert ['"bad_request"' in line for line in junk] == [True] * 6 + [False] * 3
    assert all('"rate_limited"' in line for line in junk[6:])
    assert rows_now("sessions.Session") == 1  # the other address's (before: the day's 3 too)
    assert '"rate_limited"' in colleague and "for the day" in colleague  # the office shares it
    assert '"done"' in elsewhere
