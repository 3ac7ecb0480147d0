import pytest
from channels.db import database_sync_to_async

from agent.tools import search_knowledge_base
from agent.tools.search_knowledge_base import NO_RESULTS, SearchInput
from blog.models import Article

pytestmark = pytest.mark.django_db(transaction=True)


def _index(make_article):
    from blog.indexing import chunk_reindex

    public = make_article(
        title="Step limits",
        slug="step-limits",
        body="## Why\n\nA hard cap of five model calls stops runaway agent loops.",
    )
    draft = make_article(
        title="Secret roadmap",
        slug="secret-roadmap",
        status=Article.Status.DRAFT,
        body="## Plan\n\nThe zeppelin launch happens in March.",
    )
    for article in (public, draft):
        chunk_reindex(article=article)
    return public


async def test_returns_ranked_excerpts_of_published_articles(make_article):
    public = await database_sync_to_async(_index)(make_article)

    out = await search_knowledge_base.run(SearchInput(query="runaway agent loops cap"))

    assert out[0]["article_id"] == public.pk
    assert set(out[0]) == {
        "rank",
        "article_id",
        "title",
        "url",
        "section_url",
        "excerpt",
        "relevance",
        "heading",
        "language",
    }
    assert 0 <= out[0]["relevance"] <= 1
    assert out[0]["rank"] == 1 and out[0]["url"] == "/articles/step-limits/"
    assert len(out[0]["excerpt"]) <= 600


async def test_never_returns_a_draft_even_for_its_own_words(make_article):
    await database_sync_to_async(_index)(make_article)

    out = await search_knowledge_base.run(SearchInput(query="zeppelin launch happens in March"))

    titles = [] if out == NO_RESULTS else [hit["title"] for hit in out]
    assert "Secret roadmap" not in titles


async def test_nothing_found_says_so():
    out = await search_knowledge_base.run(SearchInput(query="anything at all"))

    assert out == NO_RESULTS
    assert search_knowledge_base.summarize(out) == "no results"


async def test_a_question_the_blog_does_not_cover_gets_no_excerpts(make_article):
    await database_sync_to_async(_index)(make_article)

    out = await search_knowledge_base.run(SearchInput(query="How do I deploy it on Kubernetes?"))

    assert out == NO_RESULTS


def test_the_description_names_both_languages_and_asks_to_search_again():
    description = search_knowledge_base.description

    assert "English and Chinese" in description and "search again" in description


def test_the_summary_names_the_words_a_typo_was_searched_as():
    """The panel shows the summary: a reader sees that "pgvecter" was searched as "pgvector"."""
    hit = {"rank": 1, "title": "pgvector", "read_as": {"pgvecter": "pgvector"}}

    assert search_knowledge_base.summarize([hit]) == "1 result for “pgvector”"
    assert search_knowledge_base.summarize([{"rank": 1}, {"rank": 2}]) == "2 results"
