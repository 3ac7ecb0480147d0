"""A reader in Taiwan, over a live server's chat socket: "部落格有幾篇文章？" (Taiwan's word
for blog) is counted from the catalogue and answered in Taiwan's words, the article's title as
written; the offline model said 博客 to them, in Simplified wording."""

import pytest
from channels.db import database_sync_to_async

from blog.models import Article
from tests.security.clients import ws_ask, ws_open

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def text_of(events: list[dict]) -> str:
    return "".join(event["content"] for event in events if event["type"] == "text")


async def test_a_taiwan_reader_is_answered_in_taiwan_s_words(serve):
    await database_sync_to_async(Article.objects.create)(
        title="向量检索入门",
        slug="vector-search-intro",
        summary="向量检索把文本变成向量。",
        body="向量检索把文本变成向量。相似的文本在向量空间里距离更近。",
        status=Article.Status.PUBLISHED,
    )
    server = serve("taiwan-reader")

    socket = await ws_open(server)
    count = await ws_ask(socket, "部落格有幾篇文章？")
    mainland = await ws_ask(socket, "博客一共有几篇文章？")
    await socket.close()

    answer = text_of(count)
    assert answer.startswith("部落格共有 1 篇文章：") and "博客" not in answer
    assert "[向量检索入门](/articles/vector-search-intro/)" in answer  # the title as written
    assert "向量检索把文本变成向量。" in answer  # its summary, quoted as written
    assert [e["name"] for e in count if e["type"] == "tool_start"] == ["list_articles"]
    assert count[-1]["type"] == "done" and count[-1]["answered"] is True
    assert text_of(mainland).startswith("博客共有 1 篇文章：")
