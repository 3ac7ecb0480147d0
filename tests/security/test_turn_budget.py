"""A turn cannot spend more tokens than its budgets have left, alone or racing another turn.

The budget was checked once, when a turn started: a turn that found a few tokens left then
ran five model calls and spent several times that.
"""

import asyncio
import json

import pytest
from channels.db import database_sync_to_async

from agent.models import Turn
from testing_support.model_server import tool_call_response
from tests.security.clients import ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

CAP = 6000  # tokens one address may spend today
CALL = (1500, 100)  # what each scripted model call reports spending


def searches(count: int) -> list:
    call = [("c1", "search_knowledge_base", json.dumps({"query": "docent"}))]
    return [tool_call_response(call, usage=CALL) for _ in range(count)]


@pytest.mark.parametrize("visitors", [1, 2])
async def test_turns_stop_before_a_model_call_their_budget_cannot_cover(serve, scripted, visitors):
    scripted.enqueue(*searches(5 * visitors))  # five steps each, as the step limit allows
    server = serve(
        f"turn-budget-{visitors}", AGENT_TOKENS_PER_IP_PER_DAY=str(CAP), **model_env(scripted)
    )
    sockets = [await ws_open(server) for _ in range(visitors)]  # one session each

    turns = await asyncio.gather(*(ws_ask(socket, "search forever") for socket in sockets))
    for socket in sockets:
        await socket.close()
    server.stop()  # the saves have landed

    saved = await database_sync_to_async(list)(Turn.objects.all())
    spent = sum(turn.input_tokens + turn.output_tokens for turn in saved)
    calls = 5 * visitors - scripted.pending
    assert spent <= CAP
    assert spent == calls * sum(CALL)
    assert all(events[-1]["type"] == "error" for events in turns)
    assert "rate_limited" in [events[-1]["code"] for events in turns]
    assert len(saved) == visitors and {turn.status for turn in saved} <= {"error", "max_steps"}
