"""Transcript reads are counted per address: a loop of them cannot hold the process back.

`GET /api/conversations/<id>` loads every turn with its tool results and builds the JSON; it
was not limited, and reads of one long conversation looped from one address stretched another
visitor's frame gaps from 0.10 to 1.65 s (a red-team pass, 3,000 turns). Now a read counts
against AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP before any database work.
"""

import uuid

import httpx
import pytest

from tests.ops.prom import scrape, value

pytestmark = pytest.mark.django_db(transaction=True)


def test_transcript_reads_past_the_limit_get_429_and_other_addresses_still_read(serve):
    server = serve(
        "transcripts", AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP="3", DJANGO_TRUSTED_PROXIES="1"
    )
    path = f"/api/conversations/{uuid.uuid4()}"  # someone else's, or nobody's: still counted
    attacker = {"X-Forwarded-For": "203.0.113.7"}

    with httpx.Client(base_url=server.url, timeout=30) as client:
        statuses = [client.get(path, headers=attacker).status_code for _ in range(3)]
        refused = client.get(path, headers=attacker)
        elsewhere = client.get(path, headers={"X-Forwarded-For": "198.51.100.2"})

    assert statuses == [404] * 3
    assert refused.status_code == 429
    assert refused.json()["detail"].startswith("Too many transcript reads")
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert "no-store" in refused.headers["Cache-Control"]
    assert elsewhere.status_code == 404  # another address has its own allowance
    refusals = value(scrape(server.url), "docent_rate_limit_refusals_total", reason="transcript")
    assert refusals == 1
