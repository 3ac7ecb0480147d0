"""Walk 24: every way a turn ends is on /metrics at 0 before the first one happens."""

import pytest

from tests.ops.prom import scrape
from tests.ops.test_incidents_live import _server

pytestmark = pytest.mark.django_db(transaction=True)

STATUSES = ["done", "max_steps", "error", "cancelled", "interrupted"]


def test_a_fresh_site_exports_each_ending_at_zero(tmp_path):
    # A labelled counter had no series until its first event: an alert on
    # rate(docent_turn_errors_total[5m]) read "no data", and the first error, its series
    # appearing at 1, was no increase at all to rate() and increase().
    with _server("zeroed", tmp_path) as server:
        samples = scrape(server.url)

    def series(name: str, label: str) -> dict[str, float]:
        return {
            dict(labels)[label]: value
            for (sample, labels), value in samples.items()
            if sample == name
        }

    assert series("docent_turns_total", "status") == dict.fromkeys(STATUSES, 0.0)
    assert {"model_error", "internal", "unavailable"} <= set(
        series("docent_turn_errors_total", "code")
    )
    assert "max_steps" not in series("docent_turn_errors_total", "code")  # a status of its own
    assert series("docent_turns_answered_total", "answered") == {"true": 0.0, "false": 0.0}
    assert set(series("docent_turns_refused_total", "reason")) == {
        "draining", "busy", "address", "database", "shared_state",
    }  # fmt: skip
    assert set(series("docent_searches_total", "outcome")) == {"hits", "empty"}
    assert set(series("docent_feedback_votes_total", "vote")) == {"up", "down", "none"}
