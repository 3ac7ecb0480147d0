"""A message that looks like small talk until its last character costs one reading.

Small talk was one pattern repeating a phrase ("嗯+", "k", "kk", ...), and a run that failed at
its end backtracked through every way of cutting it into phrases: 20 "嗯" and a "?" held a
live server's turn 19.6 s (its /healthz 3.1 s), 24 took 62 s per reading and each further
character doubled it; a turn reads the message several times (recording it, answering it),
so one 41-character message would have held a web process for good.
"""

import time

import pytest

from agent.models import Turn
from tests.security.clients import sse_post

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_run_of_small_talk_that_fails_at_its_end_is_answered(serve):
    server = serve("small-talk-runs")

    # sse_post gives up after 30 s; before, this message would take years.
    response, events = sse_post(server, {"content": "嗯" * 40 + "?"})

    assert response.status_code == 200
    assert events[-1]["type"] == "done"
    assert turn_settled() == ("done", False)


def turn_settled() -> tuple[str, bool]:
    """The one turn's status and small-talk label, once its save (in the background) lands."""
    deadline = time.monotonic() + 60  # a ceiling: 10 s was near a loaded machine's save
    while True:
        turn = Turn.objects.get()
        if turn.status != "running" or time.monotonic() > deadline:
            return turn.status, turn.small_talk
        time.sleep(0.1)
