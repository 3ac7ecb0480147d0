import datetime as dt

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from agent.tools import list_articles
from agent.tools.list_articles import ListInput
from blog.models import Article

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def articles(make_article):
    now = timezone.now()

    def build():
        make_article(title="Old", published_at=now - dt.timedelta(days=3), tags=["postgres"])
        make_article(title="New", published_at=now - dt.timedelta(days=1), tags=["agents"])
        make_article(title="Middle", published_at=now - dt.timedelta(days=2), tags=["agents"])
        make_article(title="Hidden draft", status=Article.Status.DRAFT, tags=["agents"])
        make_article(title="Scheduled", published_at=now + dt.timedelta(days=1), tags=["agents"])

    return database_sync_to_async(build)


async def test_lists_the_newest_published_first(articles):
    await articles()

    out = await list_articles.run(ListInput())

    assert [a["title"] for a in out] == ["New", "Middle", "Old"]
    assert set(out[0]) == {
        "article_id",
        "title",
        "url",
        "published_at",
        "summary",
        "tags",
        "language",
    }
    assert list_articles.summarize(out) == "3 articles"


async def test_filters_by_tag_and_limits(articles):
    await articles()

    by_tag = await list_articles.run(ListInput(tag="Agents"))
    limited = await list_articles.run(ListInput(limit=1))

    assert [a["title"] for a in by_tag] == ["New", "Middle"]
    assert [a["title"] for a in limited] == ["New"]


async def test_each_article_says_the_language_it_is_written_in(make_article):
    def build():
        make_article(
            title="文本嵌入入门",
            slug="primer",
            summary="把一段文字变成 384 个数字。",
            tags=["search"],
        )
        make_article(title="pgvector and HNSW", summary="Vectors in PostgreSQL.", tags=["search"])

    await database_sync_to_async(build)()

    out = await list_articles.run(ListInput(tag="search"))

    assert {a["title"]: a["language"] for a in out} == {
        "文本嵌入入门": "zh",
        "pgvector and HNSW": "en",
    }


def test_rejects_unknown_arguments():
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        ListInput.model_validate({"tag": "x", "order": "random"})
