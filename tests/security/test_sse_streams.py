"""Long SSE answers must not hold a database connection, nor a slot the next visitor waits for.

The SSE view's request thread kept its connection (the session's save) open for the whole
stream, so the chat streams' cap had to stay low (16 a process), and a stream held its slot
until it ended: four visitors with long answers kept a fifth from starting at all.
"""

import asyncio
import json

import httpx
import pytest
from channels.db import database_sync_to_async

from testing_support.model_server import text_response
from tests.security.clients import server_connections
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

STREAMS = 12
CAP = 4  # streams starting at once


async def first_text(client: httpx.AsyncClient, started: list) -> None:
    """Open a stream, read it up to its first text event, then keep it open (hanging)."""
    headers = {"Content-Type": "application/json", "Origin": str(client.base_url)}
    body = json.dumps({"content": "tell me everything"})
    async with client.stream("POST", "/api/chat", content=body, headers=headers) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: ") and json.loads(line[6:])["type"] == "text":
                started.append(response)
                await asyncio.Event().wait()  # until cancelled: the visitor is still reading


async def test_long_answers_keep_no_connection_and_no_slot_from_the_next_visitor(serve, scripted):
    # Every answer stops after its first word until the visitor leaves.
    scripted.enqueue(*[text_response(["word ", "more"], hang_after=2) for _ in range(STREAMS)])
    server = serve(
        "long-streams",
        **model_env(scripted),
        DB_CONN_MAX_AGE="60",
        HTTP_CHAT_STREAMS_IN_FLIGHT=str(CAP),
        AGENT_MESSAGES_PER_MINUTE_PER_IP="1000",
        AGENT_TOKENS_PER_IP_PER_DAY="100000000",
    )
    idle = await database_sync_to_async(server_connections)()
    started: list = []
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        readers = [asyncio.create_task(first_text(client, started)) for _ in range(STREAMS)]
        async with asyncio.timeout(60):
            while len(started) < STREAMS:
                await asyncio.sleep(0.05)
        held = await database_sync_to_async(server_connections)() - idle
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)

    # Three times the starting cap, every one mid-answer at once.
    assert len(started) == STREAMS
    # The shared database thread and the few the turns' saves use, not one a stream.
    assert held < CAP
