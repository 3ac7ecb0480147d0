"""A conversation holds AGENT_TURNS_PER_CONVERSATION turns, then the visitor starts a new one.

The token budget of a conversation was its only bound, and the offline model spends no tokens:
one conversation grew without end (3,001 turns, ten a minute). Each transcript read loads every
turn and tool result (2 CPU-seconds and 110 MB at 3,000 turns, not rate-limited), four at once
held the event loop, and so every other visitor's stream, for 1.6 s; each new turn read the whole
history as well.
"""

import asyncio

import pytest
from channels.db import database_sync_to_async

from tests.ops.prom import scrape, value
from tests.security.clients import ws_ask, ws_open

pytestmark = pytest.mark.django_db(transaction=True)


@database_sync_to_async
def turns_saved(conversation_id: str) -> list[str]:
    from agent.models import Turn

    return list(
        Turn.objects.filter(conversation_id=conversation_id)
        .order_by("index")
        .values_list("status", flat=True)
    )


async def saved_when_settled(conversation_id: str, count: int) -> list[str]:
    for _ in range(100):  # saves land in the background, after the last event
        statuses = await turns_saved(conversation_id)
        if len(statuses) >= count and "running" not in statuses:
            return statuses
        await asyncio.sleep(0.1)
    return await turns_saved(conversation_id)


async def test_a_full_conversation_is_refused_and_a_new_one_answers(serve):
    server = serve("length", AGENT_TURNS_PER_CONVERSATION="3")
    socket = await ws_open(server)
    first = await ws_ask(socket, "What is HNSW?")
    conversation = first[0]["conversation_id"]
    endings = [first[-1]["type"]]
    for question in ("And pgvector?", "And reciprocal rank fusion?"):
        endings.append((await ws_ask(socket, question, conversation_id=conversation))[-1]["type"])
    refused = await ws_ask(socket, "One more?", conversation_id=conversation)
    fresh = await ws_ask(socket, "What is HNSW?")
    await socket.close()

    assert endings == ["done"] * 3
    assert [e["type"] for e in refused] == ["error"]
    assert refused[0]["code"] == "rate_limited"
    assert not refused[0].get("retry_after")  # no wait helps: the panel says "start a new chat"
    assert "new chat" in refused[0]["message"]
    # The refused question wrote nothing; the conversation keeps its three answers.
    assert await saved_when_settled(conversation, 3) == ["done"] * 3
    assert fresh[-1]["type"] == "done"
    assert fresh[0]["conversation_id"] != conversation
    samples = scrape(server.url)
    assert value(samples, "docent_rate_limit_refusals_total", reason="conversation_turns") == 1
