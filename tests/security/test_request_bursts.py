"""A burst of plain HTTP requests must not use up the database's connections.

Each sync view ran in a thread of its own with a connection of its own, with no cap on how
many ran at once, and the connections stayed open after the burst: 90 concurrent GETs from
one client left PostgreSQL (100 connections) refusing everyone, the chat included.
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from channels.db import database_sync_to_async

from tests.security.clients import same_minute, server_connections, sse_post, ws_ask, ws_open

pytestmark = pytest.mark.django_db(transaction=True)

BURST = 95  # under the per-address connection cap (100), over what PostgreSQL can give


async def test_a_burst_of_requests_neither_fails_nor_keeps_database_connections(
    serve, make_article
):
    for index in range(3):
        await database_sync_to_async(make_article)(title=f"Post {index}", slug=f"post-{index}")
    server = serve("bursts", DB_CONN_MAX_AGE="60")  # as `make run` has it (tests run with 0)
    limits = httpx.Limits(max_connections=BURST)

    async with httpx.AsyncClient(base_url=server.url, timeout=120, limits=limits) as client:
        burst = await asyncio.gather(*[client.get("/api/articles") for _ in range(BURST)])
        after = await client.get("/api/articles")
    held = await database_sync_to_async(server_connections)()
    visitor = await ws_open(server)
    answer = await ws_ask(visitor, "what is docent?")
    await visitor.close()

    assert [response.status_code for response in burst] == [200] * BURST
    assert after.status_code == 200 and after.json()["count"] == 3
    assert held <= 20  # the in-flight cap (32) bounds them; closed when each request ends
    assert answer[-1]["type"] == "done"


async def test_one_address_cannot_loop_over_the_search_api(serve):
    # Each search embeds its query: a client looping over it kept the CPU from the chat.
    same_minute(30)
    server = serve("search-loop", SEARCH_REQUESTS_PER_MINUTE_PER_IP="3")

    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        searches = [await client.get("/api/search", params={"q": "docent"}) for _ in range(5)]
    visitor = await ws_open(server)
    answer = await ws_ask(visitor, "what is docent?")
    await visitor.close()

    assert [response.status_code for response in searches] == [200] * 3 + [429] * 2
    assert searches[-1].json()["code"] == "rate_limited"
    assert int(searches[-1].headers["Retry-After"]) >= 1
    assert answer[-1]["type"] == "done"  # the chat's own searches are limited by the chat


async def test_long_search_queries_count_for_what_they_cost(serve):
    # Embedding a 500-character Chinese query took 1.3 CPU-seconds against 0.04 for a short
    # question: sixty long ones a minute, each allowed by count, kept over a core busy.
    server = serve("search-weight", SEARCH_REQUESTS_PER_MINUTE_PER_IP="20")
    long_query = "".join(chr(0x4E00 + (n * 37) % 20000) for n in range(500))

    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        long = [await client.get("/api/search", params={"q": long_query}) for _ in range(2)]
        short = [await client.get("/api/search", params={"q": "docent"}) for _ in range(5)]

    # The long query weighs 16 of the 20: one passes, then four short questions fit.
    assert [response.status_code for response in long] == [200, 429]
    assert [response.status_code for response in short] == [200] * 4 + [429]
    assert int(long[1].headers["Retry-After"]) >= 1


async def test_long_chat_messages_count_for_what_they_cost(serve):
    # The offline model searches with the message's first 500 characters: a long Chinese
    # message cost 1.5 CPU-seconds against 0.08 for a question, and thirty a minute were
    # allowed by count. A message now weighs what its search embeds, on every transport.
    server = serve(
        "message-weight", AGENT_MESSAGES_PER_MINUTE="1000", AGENT_MESSAGES_PER_MINUTE_PER_IP="10"
    )
    long_message = "".join(chr(0x4E00 + (n * 37) % 20000) for n in range(200))  # weighs 7

    socket = await ws_open(server)
    first = await ws_ask(socket, long_message)
    await socket.close()
    second = sse_post(server, {"type": "message", "content": long_message})[1]
    short = [
        sse_post(server, {"type": "message", "content": "what is docent?"})[1] for _ in range(4)
    ]

    assert first[-1]["type"] == "done"
    assert second[-1]["code"] == "rate_limited" and second[-1]["retry_after"] >= 1
    # The long one took 7 of the address's 10 places: three questions fit, then no more.
    assert [events[-1]["type"] for events in short] == ["done"] * 3 + ["error"]
    assert short[-1][-1]["code"] == "rate_limited"


async def test_punctuation_dense_queries_count_for_what_they_cost(serve):
    # The weight counted a token per three ASCII characters, but the embedder reads "a." as two
    # tokens: 500 characters of it were 505 tokens, weighed as 167 (6 of the 60 a minute), and
    # cost 2.1 to 2.5 CPU-seconds each: ten a minute, 23 CPU-seconds, from one address.
    server = serve("search-punctuation", SEARCH_REQUESTS_PER_MINUTE_PER_IP="20")

    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        dense = [await client.get("/api/search", params={"q": "a." * 250}) for _ in range(2)]
        short = [await client.get("/api/search", params={"q": "docent"}) for _ in range(5)]

    # Weighed like 500 Chinese characters, 16 of the 20: one passes, then four questions fit.
    assert [response.status_code for response in dense] == [200, 429]
    assert [response.status_code for response in short] == [200] * 4 + [429]


async def test_a_burst_of_chat_streams_leaves_the_database_connections_to_everyone(serve):
    # Each SSE request opens a connection in a request thread of its own (the session, then
    # the turn's start; the whole turn, before tests/security/test_sse_streams.py's fix):
    # uncapped, 150 at once (five addresses at their message limit) left PostgreSQL refusing
    # everyone: 68 of them ended `internal`, /readyz failed.
    server = serve(
        "chat-streams",
        DB_CONN_MAX_AGE="60",
        HTTP_CHAT_STREAMS_IN_FLIGHT="8",
        HTTP_CHAT_STREAMS_IN_FLIGHT_PER_IP=str(BURST),  # as if from many addresses
        AGENT_MESSAGES_PER_MINUTE_PER_IP="1000",
        AGENT_TOKENS_PER_IP_PER_DAY="100000000",
    )
    peak = 0
    burst_over = asyncio.Event()

    async def watch() -> None:
        nonlocal peak
        while not burst_over.is_set():
            peak = max(peak, await database_sync_to_async(server_connections)())
            await asyncio.sleep(0.02)

    def ask(n: int) -> list[dict]:
        return sse_post(server, {"content": f"what is docent? {n}"})[1]

    idle = await database_sync_to_async(server_connections)()
    watching = asyncio.create_task(watch())
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=BURST) as clients:  # all at once, each its own stream
        asked = [loop.run_in_executor(clients, ask, n) for n in range(BURST)]
        answers = await asyncio.gather(*asked)
    burst_over.set()
    await watching

    assert [events[-1]["type"] for events in answers] == ["done"] * BURST
    # The cap on streams starting (8), and the threads all turns share (saving, searching), where
    # uncapped the burst took every connection PostgreSQL had, this test's own included.
    assert peak - idle < BURST // 2
