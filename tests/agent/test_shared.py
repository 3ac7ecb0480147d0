"""A turn's end on the shared state: budgets settled, slot freed, conversation held `saving`."""

import pytest

from agent.shared import Acquired, LocalState, RedisState
from tests.security.conftest import redis_url  # noqa: F401  (a real redis-server)


@pytest.fixture(params=["redis", "local"])
def state(request):
    if request.param == "local":
        return LocalState()
    return RedisState(request.getfixturevalue("redis_url"))


async def test_a_turns_end_settles_budgets_frees_the_slot_and_holds_the_conversation(state):
    assert await state.acquire("conv", "sess", "t1", 1) == Acquired.OK
    assert await state.reserve([("tok:conv", 10_000, 60)], 500) == (0, 500)  # held at the start

    await state.finish("conv", "sess", "t1", [("tok:conv", 120 - 500, 60), ("tok:day", 120, 60)])

    assert await state.held("conv") == "saving"  # the next turn waits for the save
    assert await state.acquire("", "sess", "t2", 1) == Acquired.OK  # the session's slot is free
    # 120 tokens spent on each budget, the reservation given back.
    assert await state.reserve([("tok:conv", 121, 60), ("tok:day", 121, 60)], 0) == (0, 0)
    assert (await state.reserve([("tok:conv", 120, 60)], 0)).over == 1
    assert (await state.reserve([("tok:day", 120, 60)], 0)).over == 1


async def test_a_hold_takes_what_room_is_left_and_a_whole_one_all_or_nothing(state):
    budgets = [("tok:a", 1_000, 60), ("tok:b", 700, 60)]

    assert await state.reserve(budgets, 500) == (0, 500)
    assert await state.reserve(budgets, 500) == (0, 200)  # all "tok:b" had left
    assert await state.reserve(budgets, 1) == (2, 0)
    assert await state.reserve(budgets[:1], 400, whole=True) == (1, 0)  # 300 left on "tok:a"
    assert await state.reserve(budgets[:1], 300, whole=True) == (0, 300)


async def test_a_moving_window_allows_the_limit_in_any_window_and_no_more(state):
    counters = [("rl:s", 2), ("rl:ip", 3)]

    hits = [await state.hit(counters, 60) for _ in range(3)]

    assert [hit.over for hit in hits] == [0, 0, 1]
    assert 59 < hits[2].retry_after <= 60
    assert (await state.hit(counters[1:], 60)).over == 0  # the refused hit was not counted
    assert (await state.hit(counters[1:], 60)).over == 1


async def test_a_heavy_event_needs_as_many_places_as_it_weighs(state):
    counters = [("rl:search", 5)]

    hits = [await state.hit(counters, 60, weight) for weight in (4, 2, 1, 9)]

    assert [hit.over for hit in hits] == [0, 1, 0, 1]  # 4 + 1 fill the 5; 2 and 9 do not fit
    assert 59 < hits[1].retry_after <= 60 and 59 < hits[3].retry_after <= 60


async def test_another_turns_lock_is_left_alone(state):
    assert await state.acquire("conv", "sess", "mine", 2) == Acquired.OK
    await state.update("conv", "sess", "mine", "release")
    assert await state.acquire("conv", "sess", "theirs", 2) == Acquired.OK

    await state.finish("conv", "sess", "mine", [])

    assert await state.held("conv") == "running"


async def test_expired_budgets_are_swept_in_one_process():
    # Redis expires them; in one process each conversation's budget stayed until a restart.
    import asyncio

    local = LocalState()
    await local.add([(f"tok:c:{n}", 100, 1) for n in range(50)] + [("tok:d:today", 5, 3600)])
    await asyncio.sleep(1.1)

    for _ in range(1000):  # the sweep runs now and then, with the rate-limit checks
        await local.hit([("rl:s:visitor", 10**6)], 60)

    assert list(local.counters) == ["tok:d:today"]


async def test_an_address_holds_its_slots_over_all_its_sessions(state):
    take = [await state.acquire("", f"sess{n}", f"t{n}", 2, "addr", 2) for n in range(3)]

    assert take == [Acquired.OK, Acquired.OK, Acquired.ADDRESS_FULL]
    await state.finish("", "sess0", "t0", [], "addr")  # a turn's end frees both of its slots
    assert await state.acquire("", "sess2", "t2", 2, "addr", 2) == Acquired.OK
    await state.update("", "sess1", "t1", "release", "addr")
    assert await state.acquire("conv", "sess1", "t3", 2, "addr", 2) == Acquired.OK
    # Refused by the address, the session took no slot and the conversation no lock.
    assert await state.acquire("other", "sess9", "t4", 1, "addr", 2) == Acquired.ADDRESS_FULL
    assert await state.acquire("other", "sess9", "t5", 1) == Acquired.OK


async def test_a_named_event_can_be_taken_back_and_only_it(state):
    counters = [("rl:login:ip", 2), ("rl:login:u", 2)]

    assert (await state.hit(counters, 900, event="ok")).over == 0
    await state.forget([key for key, _ in counters], "ok")  # it signed in: not a guess
    hits = [await state.hit(counters, 900, event=f"guess{n}") for n in range(3)]
    await state.forget([key for key, _ in counters], "never-recorded")

    assert [hit.over for hit in hits] == [0, 0, 1]
    assert (await state.hit(counters, 900)).over == 1
