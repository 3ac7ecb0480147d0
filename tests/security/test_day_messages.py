"""An address's messages in any 24 h are capped (AGENT_MESSAGES_PER_DAY_PER_IP).

With the offline model, the default, no token budget ever binds: the per-minute limit alone let
one address send thirty messages a minute around the clock, 43,200 turns a day, each stored
with its tool results. A new cookie per message changed nothing then and changes nothing now.
"""

import json

import httpx
import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def ask(base_url: str, question: str) -> dict:
    """One question over SSE from a visitor with no cookie; its last event."""
    headers = {"Content-Type": "application/json", "Origin": base_url}
    with httpx.Client(base_url=base_url, timeout=60) as client:
        reply = client.post("/api/chat", content=json.dumps({"content": question}), headers=headers)
    events = [json.loads(line[6:]) for line in reply.text.splitlines() if line.startswith("data: ")]
    return events[-1]


def test_an_address_past_its_days_messages_is_refused_whatever_its_cookies(serve):
    server = serve("day-messages", AGENT_MESSAGES_PER_DAY_PER_IP="3")

    ends = [ask(server.url, f"What is a step limit? ({n})") for n in range(3)]
    refused = ask(server.url, "What is a step limit? (4)")

    assert [end["type"] for end in ends] == ["done"] * 3
    assert refused["type"] == "error" and refused["code"] == "rate_limited"
    # Named, so the panel says a day's questions ran out, and when the first of them leaves
    # the 24 h window: not "asking faster than I can answer".
    assert refused["reason"] == "ip_day"
    assert 23 * 3600 < refused["retry_after"] <= 24 * 3600
