"""Whom a limit refused, as the log says it: the address and the key the limit counted it under."""

import json

import httpx
import pytest

from tests.ops.prom import scrape, value
from tests.ops.test_incidents_live import _server

pytestmark = pytest.mark.django_db(transaction=True)

VISITOR = "2001:db8:7:9::"  # one IPv6 visitor's /64: every address in it is theirs


def test_a_visitor_stepping_through_its_slash_64_is_named_by_its_key(tmp_path):
    """One visitor searched past its limit from three addresses of its /64: the limit counted
    them as one key, and each refusal line named a different address, so nothing in the log
    said the refusals were one visitor's (or which key an operator would look for)."""
    env = {
        "DJANGO_TRUSTED_PROXIES": "1",
        "SEARCH_REQUESTS_PER_MINUTE_PER_IP": "1",
        "LOG_FORMAT": "json",
    }
    with _server("refusal-keys", tmp_path, **env) as server:
        # The first search loads the embedding model: seconds on a busy machine.
        with httpx.Client(base_url=server.url, timeout=60) as client:
            statuses = [
                client.get(
                    "/api/search", params={"q": "mast"}, headers={"X-Forwarded-For": address}
                ).status_code
                for address in (f"{VISITOR}1", f"{VISITOR}2", f"{VISITOR}3", "192.0.2.8")
            ]
        samples = scrape(server.url)
        output = server.output()

    assert statuses == [200, 429, 429, 200]  # the third address was the same visitor
    assert value(samples, "docent_rate_limit_refusals_total", reason="search") == 2
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    [said] = [line for line in lines if line["logger"] == "ops.refusals"]
    assert said["message"].startswith(
        f"rate limit search refused a request from {VISITOR}2 (counted as {VISITOR}/64);"
    )
    assert said["reason"] == "search" and said["address"] == f"{VISITOR}2"
    assert said["address_bucket"] == f"{VISITOR}/64" and said["refused_since"] == 0
