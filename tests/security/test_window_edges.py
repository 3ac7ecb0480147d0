"""Rate limits count a moving minute: a burst on both sides of a minute's edge is one burst.

With fixed minute windows a client sent its limit at :59 and its limit again at :00, twice the
limit in two seconds. These tests wait for a real minute's edge (up to a minute) and send on
both sides of it.
"""

import asyncio
import time

import httpx
import pytest

from tests.security.clients import ws_ask, ws_open

pytestmark = pytest.mark.django_db(transaction=True)


async def before_the_edge(seconds: float) -> None:
    """Sleep until `seconds` before the next minute of the clock (the server's clock too).

    Asleep in the event loop, so the open socket still answers its keep-alive pings."""
    await asyncio.sleep((60 - seconds - time.time() % 60) % 60)


async def past_the_edge() -> None:
    await asyncio.sleep(60 - time.time() % 60 + 0.5)


async def test_messages_sent_on_both_sides_of_a_minutes_edge_count_together(serve):
    server = serve("edge-messages", AGENT_MESSAGES_PER_MINUTE="3")
    socket = await ws_open(server)
    # The warm-up counts too, so it is sent close to the edge: sent a minute earlier it would
    # leave the moving window before the messages after the edge (the test failed that way
    # when its warm-up landed in a minute's last seconds).
    await before_the_edge(15)
    await ws_ask(socket, "warm up")  # the session is saved and the worker is warm
    before = [(await ws_ask(socket, "before"))[-1] for _ in range(2)]  # 3 with the warm-up
    await past_the_edge()
    after = [(await ws_ask(socket, "after"))[-1] for _ in range(3)]
    await socket.close()

    assert [event["type"] for event in before] == ["done", "done"]
    assert [event.get("code") for event in after] == ["rate_limited"] * 3
    assert after[0]["retry_after"] >= 1


async def test_searches_sent_on_both_sides_of_a_minutes_edge_count_together(serve):
    server = serve("edge-search", SEARCH_REQUESTS_PER_MINUTE_PER_IP="4")

    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        await before_the_edge(6)
        before = [await client.get("/api/search", params={"q": "docent"}) for _ in range(4)]
        await past_the_edge()
        after = [await client.get("/api/search", params={"q": "docent"}) for _ in range(4)]

    assert [response.status_code for response in before] == [200] * 4
    assert [response.status_code for response in after] == [429] * 4
    assert 1 <= int(after[0].headers["Retry-After"]) <= 60
