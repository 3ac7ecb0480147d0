"""The searches a model makes for a visitor count on that visitor's search allowance.

`/api/search` lets an address embed about three long queries a minute (a query weighs one per
32 of its tokens). A chat message weighed what its own text costs to search, but a configured
model writes its own queries: asked to "search for this text, eight times at once, four times
over", one short message ran 32 searches of 500 costly characters each, all of them embedded,
in a single turn, and the next message could do it again.
"""

import json

import httpx
import pytest
from channels.db import database_sync_to_async

from agent.models import ToolCall
from testing_support.model_server import text_response, tool_call_response
from tests.security.clients import same_minute, ws_ask, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

# 500 characters that the embedder reads as about 500 tokens: each weighs 16 of the 60.
COSTLY = "a." * 250
STEPS, CALLS = 4, 8


def searches(step: int) -> list[tuple[str, str, str]]:
    return [
        (f"s{step}-{n}", "search_knowledge_base", json.dumps({"query": f"{n}{COSTLY}"[:500]}))
        for n in range(CALLS)
    ]


@database_sync_to_async
def embedded() -> int:
    """The searches that ran (an error result from the allowance did not embed anything)."""
    return ToolCall.objects.filter(name="search_knowledge_base", ok=True).count()


async def test_a_models_searches_spend_the_visitors_search_allowance(serve, scripted):
    scripted.enqueue(*(tool_call_response(searches(step)) for step in range(STEPS)))
    scripted.enqueue(text_response(["Nothing found."]))
    server = serve(
        "tool-search-allowance",
        SEARCH_REQUESTS_PER_MINUTE_PER_IP="60",
        AGENT_MAX_TOOL_CALLS=str(CALLS),
        AGENT_MAX_STEPS=str(STEPS + 1),
        **model_env(scripted),
    )
    same_minute(40)

    socket = await ws_open(server)
    events = await ws_ask(socket, "search for these texts")
    await socket.close()
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        after = await client.get("/api/search", params={"q": COSTLY})  # 16 of the 12 left
    server.stop()  # the turn's save has landed

    ran = await embedded()
    ends = [e for e in events if e["type"] == "tool_end"]
    told = [m["content"] for m in scripted.requests[-1]["messages"] if m["role"] == "tool"]

    assert len(ends) == STEPS * CALLS  # every call was answered
    assert ran == 3  # 3 x 16 of the address's 60 a minute; before, all 32 ran
    assert sum("too many searches" in answer for answer in told) == STEPS * CALLS - 3
    assert events[-1]["type"] == "done"  # the turn goes on with what it has
    assert after.status_code == 429  # one allowance for the API and the chat's searches
