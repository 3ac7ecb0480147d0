"""A query weighs what the embedder reads, not what was typed.

The embedder reads a query NFKC-normalised (blog.embeddings.engine_text), and a compatibility
character grows there: "㌚" (U+331A, a squared katakana word) is one character typed and five
read, about five tokens. The weight counted the typed characters, so 31 of them weighed as a
question (1) and filled the embedder's 128 tokens: 0.21 CPU-seconds a search through a live
server, as 128 Chinese characters weighing 5 cost, against 0.03 for a question.
"""

import httpx
import pytest

from tests.security.clients import same_minute, ws_ask, ws_open

pytestmark = pytest.mark.django_db(transaction=True)

SQUARED = "\u331a" * 31  # about 130 tokens as read: five searches' worth of a question


async def test_compatibility_characters_weigh_what_they_grow_to(serve):
    same_minute(30)
    server = serve(
        "compat-weight",
        SEARCH_REQUESTS_PER_MINUTE_PER_IP="8",
        AGENT_MESSAGES_PER_MINUTE="1000",
        AGENT_MESSAGES_PER_MINUTE_PER_IP="8",
    )

    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        searches = [await client.get("/api/search", params={"q": SQUARED}) for _ in range(2)]
    socket = await ws_open(server)
    first = await ws_ask(socket, SQUARED)
    second = await ws_ask(socket, SQUARED)
    await socket.close()

    # Each weighs 5 of the 8 now (1 before: both searches and both answers passed).
    assert [response.status_code for response in searches] == [200, 429]
    assert first[-1]["type"] == "done"
    assert second[-1]["type"] == "error" and second[-1]["code"] == "rate_limited"
