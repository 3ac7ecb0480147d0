"""A turn's hold record: what a worker killed mid-turn held is given back, exactly once."""

import pytest

from agent.holds import HoldSettlement
from agent.shared import LocalState, RedisState
from tests.security.conftest import redis_url  # noqa: F401  (a real redis-server)

BUDGETS = [("tok:ip", 10_000, 60), ("tok:day", 100_000, 60)]


@pytest.fixture(params=["redis", "local"])
def state(request):
    if request.param == "local":
        return LocalState()
    return RedisState(request.getfixturevalue("redis_url"))


async def charged(state, key: str) -> int:
    if isinstance(state, LocalState):
        return state._get(key)
    return int(await state._client().get(key) or 0)


async def budgets(state) -> list[int]:
    return [await charged(state, key) for key, _cap, _ttl in BUDGETS]


def ended(turn_id: str, tokens: int, extras=()) -> HoldSettlement:
    """The settlement the turn's own worker makes at its end (fallback: what it held, 0)."""
    return HoldSettlement(turn_id, tokens, list(extras), [])


async def test_a_dead_turns_hold_is_settled_to_its_checkpoint_once(state):
    await state.reserve(BUDGETS, 4000, hold="t1")
    await state.reserve(BUDGETS, 1500, whole=True, hold="t1")  # its answer asked for more
    await state.holds_renew({"t1": 700})  # its last checkpoint: 700 spent
    assert await budgets(state) == [5500, 5500]  # the worker dies here: nothing settles

    freed = await state.holds_recover(["t1"])
    again = await state.holds_recover(["t1"])

    assert freed == {"t1": 4800} and again == {"t1": 0}
    assert await budgets(state) == [700, 700]


async def test_a_stuck_worker_ending_after_recovery_is_charged_its_own_figure(state):
    await state.reserve(BUDGETS, 4000, hold="t1")
    await state.holds_renew({"t1": 700})
    await state.holds_recover(["t1"])  # it stopped renewing, but was only stuck

    await state.reserve(BUDGETS, 500, whole=True, hold="t1")  # it goes on and asks for more
    await state.settle(ended("t1", 1200))
    await state.holds_recover(["t1"])  # a late recovery finds nothing left to settle

    assert await budgets(state) == [1200, 1200]


async def test_a_hold_whose_lease_ended_is_swept_and_a_renewed_one_is_not(state, settings):
    settings.AGENT_LEASE_SECONDS = 0  # a lease that has ended the moment it is taken
    await state.reserve(BUDGETS, 4000, hold="dead")  # its turn was never even recorded
    settings.AGENT_LEASE_SECONDS = 60
    await state.reserve(BUDGETS, 4000, hold="alive")
    await state.holds_renew({"alive": 300})

    assert await state.holds_recover([]) == {"dead": 4000}
    assert await budgets(state) == [4000, 4000]  # the live turn's hold, whole


async def test_the_next_turn_holds_and_settles_apart_from_the_dead_one(state):
    await state.reserve(BUDGETS, 4000, hold="dead")
    await state.holds_renew({"dead": 900})
    await state.reserve(BUDGETS, 4000, hold="next")  # the visitor asks again elsewhere

    await state.holds_recover(["dead"])
    await state.finish("", "sess", "token", [], hold=ended("next", 2500))

    assert await budgets(state) == [900 + 2500, 900 + 2500]


async def test_a_new_conversations_budget_is_charged_by_recovery_once_attached(state):
    await state.reserve(BUDGETS, 4000, hold="first")
    await state.hold_attach("first", [("tok:c:new", 600)])
    await state.holds_renew({"first": 800})

    await state.holds_recover(["first"])

    assert await charged(state, "tok:c:new") == 800
    assert await budgets(state) == [800, 800]


async def test_without_a_record_a_settlement_uses_the_turns_own_figures(state):
    await state.reserve(BUDGETS, 4000)  # no turn id: nothing recorded
    fallback = [(key, 1000 - 4000, ttl) for key, _cap, ttl in BUDGETS]

    await state.settle(HoldSettlement("", 1000, [], fallback))

    assert await budgets(state) == [1000, 1000]
