"""An endpoint that reports zero tokens is charged what the turn counted.

A report was taken as it came, zeros included. A gateway that puts an empty usage on every
chunk (LiteLLM does, for a provider that reports none) made every turn free: six answers of
about 1,400 tokens each on an address with 3,000 left, all charged 0, and the next six too.
Every call sends a prompt, and a reply that streamed text wrote some: a zero there is no count.
"""

import pytest
from channels.db import database_sync_to_async

from agent.models import Turn
from testing_support.model_server import text_response
from tests.security.clients import ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

BUDGET = 3000
QUESTIONS = 6


async def test_answers_reported_as_free_still_spend_the_budget(serve, scripted):
    for _ in range(QUESTIONS):
        scripted.enqueue(text_response(["Steps are capped at five. " * 20], usage=(0, 0)))
    server = serve(
        "zero-usage",
        AGENT_TOKENS_PER_IP_PER_DAY=str(BUDGET),
        AGENT_TOKENS_PER_ANSWER="200",
        **model_env(scripted),
    )
    socket = await ws_open(server)

    endings = [(await ws_ask(socket, "Why cap the steps?"))[-1] for _ in range(QUESTIONS)]
    await socket.close()
    server.stop()

    answered = [e for e in endings if e["type"] == "done"]
    assert 0 < len(answered) < QUESTIONS  # before: all six, each charged 0
    assert endings[-1]["code"] == "rate_limited"
    saved = await database_sync_to_async(list)(Turn.objects.all())
    spent = sum(turn.input_tokens + turn.output_tokens for turn in saved)
    assert 0 < spent <= BUDGET
