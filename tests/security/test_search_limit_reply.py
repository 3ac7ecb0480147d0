"""A reader whose address has used its searches is told so, not that the search failed.

The chat's searches draw on the address's `/api/search` allowance, so anyone behind the same
address (a shared office or mobile-carrier NAT, an IPv6 /48) can spend it for everyone there.
The offline model then answered "The search didn't finish this time… Please ask again in a
moment": the reader asked again at once, was refused again, and never learnt why. The search
is spent over HTTP against a live daphne, then the question is asked over its chat socket.
"""

import httpx
import pytest
from channels.db import database_sync_to_async

from blog.models import Article
from tests.security.clients import ws_ask, ws_open

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

QUESTIONS = {
    "en": ("How do agents limit their steps?", "Too many searches"),
    "zh": ("智能体怎么限制步数？", "检索太多"),
}


@pytest.mark.parametrize("lang", QUESTIONS)
async def test_a_reader_past_the_search_allowance_is_told_to_wait(serve, lang):
    server = serve(f"search-limit-{lang}", SEARCH_REQUESTS_PER_MINUTE_PER_IP="2")
    question, said = QUESTIONS[lang]
    with httpx.Client(base_url=server.url) as client:
        spent = [client.get("/api/search", params={"q": "step"}).status_code for _ in range(3)]

    socket = await ws_open(server)
    events = await ws_ask(socket, question)
    await socket.close()

    assert spent == [200, 200, 429]
    step = next(event for event in events if event["type"] == "tool_end")
    assert (step["ok"], step["summary"]) == (False, "too many searches")
    answer = "".join(event["content"] for event in events if event["type"] == "text")
    assert said in answer and "didn" not in answer and "没有完成" not in answer
    assert events[-1]["type"] == "done" and events[-1]["answered"] is False


# Catalogue questions that search for a topic no tag names, or for an article not found by
# its title: a refused search there said the blog had no such article, while it has one.
CATALOGUE = [
    "Which articles are about websockets?",
    "When was the “Reconnecting sockets” article published?",
]


@pytest.mark.parametrize("question", CATALOGUE)
async def test_a_catalogue_question_past_the_allowance_does_not_deny_the_article(serve, question):
    await database_sync_to_async(Article.objects.create)(
        title="Keeping WebSockets alive",
        slug="keeping-websockets-alive",
        summary="Reconnecting sockets with backoff.",
        body="How the chat panel reconnects its websockets after a dropped connection.",
        status=Article.Status.PUBLISHED,
    )
    server = serve("search-limit-catalogue", SEARCH_REQUESTS_PER_MINUTE_PER_IP="1")
    with httpx.Client(base_url=server.url) as client:
        spent = [client.get("/api/search", params={"q": "step"}).status_code for _ in range(2)]

    socket = await ws_open(server)
    events = await ws_ask(socket, question)
    await socket.close()

    assert spent == [200, 429]
    steps = [(e["name"], e["summary"]) for e in events if e["type"] == "tool_end"]
    assert ("search_knowledge_base", "too many searches") in steps
    answer = "".join(event["content"] for event in events if event["type"] == "text")
    assert answer.startswith("Too many searches") and "couldn’t find" not in answer
