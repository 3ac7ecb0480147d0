"""One process's shared state (no REDIS_URL) forgets the sessions and conversations it is done
with, as Redis does.

Every session that ever ran a turn kept an entry in the process's session slots until it
restarted, and a lock whose release came too late stayed too: an address may open a new
session with every message it may send (thirty a minute), so it grew them by about 43,000 a day,
each a few hundred bytes of memory no sweep ever gave back.
"""

from agent.shared import LocalState

VISITORS = 5000


async def test_finished_turns_leave_no_session_or_lock_behind():
    state = LocalState()

    for n in range(VISITORS):  # a new session per message, as a cookie-less client has
        conversation, session = f"turns:c:{n}", f"turns:s:{n:032d}"
        assert await state.acquire(conversation, session, "token", 2) == 0
        await state.finish(conversation, session, "token", [])  # the last event is sent
        await state.update(conversation, session, "token", "release")  # the save landed

    assert (len(state.slots), len(state.locks)) == (0, 0)


async def test_holds_whose_release_never_came_are_swept_once_expired(settings):
    settings.AGENT_LEASE_SECONDS = 0.001  # a crashed turn's lease, run out at once
    state = LocalState()
    for n in range(VISITORS):
        await state.acquire(f"turns:c:{n}", f"turns:s:{n:032d}", "token", 2)

    for n in range(1000):  # other traffic: the sweep runs every thousand counts
        await state.hit([(f"rl:ip:{n}", 30)], 60)

    assert (len(state.slots), len(state.locks)) == (0, 0)
