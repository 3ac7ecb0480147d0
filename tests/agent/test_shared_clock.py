"""Moving windows and turn slots on Redis keep Redis's time, not each worker's.

Each worker stamped its events with its own clock and swept by it: a worker whose clock ran a
window ahead found every other worker's events old, and one a lease's length ahead found their
running turns' slots expired. Two workers are two RedisState clients on one redis-server; the
second's clock is set ahead, as a host whose NTP failed would have it.
"""

import time

import pytest

from agent.shared import Acquired, RedisState
from tests.security.conftest import redis_url  # noqa: F401  (a real redis-server)

AHEAD = 3600.0  # the second worker's clock, in seconds ahead


@pytest.fixture
def workers(redis_url, monkeypatch):  # noqa: F811
    """Two workers' clients; `ahead()` sets this process's clock as the second one's."""
    real = time.time

    def ahead() -> None:
        monkeypatch.setattr(time, "time", lambda: real() + AHEAD)

    return RedisState(redis_url), RedisState(redis_url), ahead


async def test_a_worker_whose_clock_runs_ahead_still_counts_the_others_events(workers):
    first, second, ahead = workers
    counter = [("rl:ip:192.0.2.7", 3)]
    for _ in range(3):
        assert (await first.hit(counter, 60)).over == 0

    ahead()

    assert (await second.hit(counter, 60)).over == 1  # before: 0, a fourth in the minute


async def test_a_worker_whose_clock_runs_ahead_keeps_the_others_turn_slots(workers):
    first, second, ahead = workers
    assert await first.acquire("", "session", "turn-1", 1) == Acquired.OK

    ahead()

    assert await second.acquire("", "session", "turn-2", 1) == Acquired.SESSION_FULL  # was OK


async def test_a_worker_whose_clock_runs_ahead_recovers_no_live_turns_hold(workers):
    first, second, ahead = workers
    held = await first.reserve([("tok:ip:192.0.2.7", 10_000, 3600)], 4000, hold="turn-1")
    assert held.tokens == 4000

    ahead()

    assert await second.holds_recover([]) == {}  # before: {"turn-1": 4000}, its hold given back
