"""The turn runner, in process: what a turn holds is given back however early it ends."""

import asyncio
import threading

import pytest
from channels.db import database_sync_to_async

from agent import ratelimit
from agent.runner import ChatMessage, TurnRunner, Visitor
from agent.shared import state

ADDRESS = "203.0.113.5"


def held(client_ip: str) -> int:
    """Tokens on the address's budget for today (LocalState, the single-process store)."""
    budgets = ratelimit._budgets(conversation_id=None, client_ip=client_ip)
    return state()._get(budgets[0][0])


@pytest.mark.django_db(transaction=True)
async def test_a_turn_cancelled_while_waiting_for_the_database_gives_back_its_hold(settings):
    """A socket closed right after its message cancels the turn between its budget hold and
    its row (the turn waits for the database thread, busy with other visitors). The hold used
    to stay spent for the day, on the address's budget and on the site's."""
    settings.AGENT_TOKENS_PER_IP_PER_DAY = settings.AGENT_TOKENS_RESERVE  # room for one hold
    gate = threading.Event()
    busy = asyncio.ensure_future(database_sync_to_async(gate.wait)())  # the thread is taken
    events: list[dict] = []

    async def emit(event: dict) -> None:
        events.append(event)

    turn = asyncio.create_task(
        TurnRunner().run(
            message=ChatMessage(content="What is pgvector?"),
            visitor=Visitor(session_key="a" * 32, client_ip=ADDRESS),
            emit=emit,
        )
    )
    while held(ADDRESS) == 0:  # the turn has taken its hold and waits for the thread
        await asyncio.sleep(0.01)
    turn.cancel()
    gate.set()
    await asyncio.gather(turn, busy, return_exceptions=True)

    assert turn.cancelled() and events == []
    assert held(ADDRESS) == 0
    # The address's whole day is still there for its next question.
    again = await ratelimit.budget_reserve(conversation_id=None, client_ip=ADDRESS)
    assert isinstance(again, ratelimit.TurnBudget)
