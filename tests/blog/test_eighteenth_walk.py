"""A reader who arrives from a search engine on one article (walk 18): the links under it to
the articles before and after, and a mistyped or cut-short address that names the article."""

import datetime as dt

import pytest
from django.utils import timezone

from blog.models import Article

pytestmark = pytest.mark.django_db


def _dated(make_article, title: str, days_ago: int, **fields) -> Article:
    return make_article(
        title=title, published_at=timezone.now() - dt.timedelta(days=days_ago), **fields
    )


def test_an_article_links_the_articles_just_older_and_just_newer(client, make_article):
    oldest = _dated(make_article, "Oldest post", 30)
    middle = _dated(make_article, "Middle post", 20)
    newest = _dated(make_article, "Newest post", 10)
    _dated(make_article, "A draft", 15, status=Article.Status.DRAFT)
    _dated(make_article, "Scheduled post", -5)

    html = client.get(middle.get_absolute_url()).content.decode()
    pager = html.split('class="article-pager"')[1].split("</nav>")[0]

    assert f'href="{newest.get_absolute_url()}" rel="next"' in pager
    assert f'href="{oldest.get_absolute_url()}" rel="prev"' in pager
    assert "A draft" not in pager and "Scheduled post" not in pager

    first = client.get(oldest.get_absolute_url()).content.decode()
    assert 'rel="prev"' not in first and "Middle post" in first


def test_the_links_come_in_the_readers_language(client, make_article):
    _dated(make_article, "Older post", 20)
    article = _dated(make_article, "This post", 10)

    html = client.get(article.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "较早的一篇" in html and 'aria-label="更多文章"' in html


def test_a_lone_article_has_no_empty_pager(client, make_article):
    article = make_article(title="Only post")

    html = client.get(article.get_absolute_url()).content.decode()

    assert "article-pager" not in html and "All articles" in html


@pytest.mark.parametrize(
    "typed", ["hybrid-search-with-rfr", "hybrid-search", "Hybrid-Search-With-RRF"]
)
def test_a_mistyped_or_cut_short_address_names_the_article_it_meant(client, make_article, typed):
    make_article(title="Hybrid search with RRF", slug="hybrid-search-with-rrf")
    make_article(title="Hybrid cars", slug="hybrid-cars")

    response = client.get(f"/articles/{typed}/")

    assert response.status_code == 404
    html = response.content.decode()
    link = '<a href="/articles/hybrid-search-with-rrf/" lang="en">Hybrid search with RRF</a>'
    assert f"Did you mean {link}?" in html


def test_a_404_names_no_draft_and_nothing_far_off(client, make_article):
    make_article(title="Secret plans", slug="secret-plans", status=Article.Status.DRAFT)
    make_article(title="Pgvector and HNSW", slug="pgvector-and-hnsw")

    # "hnsw" is in the slug, but neither close to it nor its start.
    for typed in ("secret-plan", "hnsw", "zzz"):
        response = client.get(f"/articles/{typed}/", HTTP_ACCEPT_LANGUAGE="zh-hans")
        assert response.status_code == 404
        html = response.content.decode()
        assert "Did you mean" not in html and "你要找的是不是" not in html, typed
        assert "Secret plans" not in html


def test_the_suggestion_is_escaped_and_translated(client, make_article):
    make_article(title="<b>Bold</b> ideas", slug="bold-ideas")

    html = client.get("/articles/bold-idea/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "你要找的是不是" in html
    assert "&lt;b&gt;Bold&lt;/b&gt; ideas" in html and "<b>Bold</b>" not in html
    # An English title in a Chinese sentence says its language (a screen reader's voice).
    assert 'lang="en">&lt;b&gt;Bold' in html


def test_a_404_compares_a_bounded_number_of_addresses(client, make_article, monkeypatch):
    """Each 404 matched the address against every article's: at 10,000 articles, 23 ms of
    matching that anyone could ask for as often as they liked."""
    from blog import selectors

    monkeypatch.setattr(selectors, "SLUG_CANDIDATES", 1)
    _dated(make_article, "Hybrid search with RRF", 3, slug="hybrid-search-with-rrf")
    _dated(make_article, "Agent loops", 1, slug="agent-loops")

    older = client.get("/articles/hybrid-search-with-rfr/").content.decode()
    newest = client.get("/articles/agent-loop/").content.decode()
    monkeypatch.setattr(selectors, "SLUG_LONGEST", 5)  # no slug is longer: not compared
    too_long = client.get("/articles/agent-loop/").content.decode()

    assert "Did you mean" not in older  # beyond the newest one compared
    assert "Did you mean" in newest
    assert "Did you mean" not in too_long


def test_a_tag_page_says_how_many_articles_and_the_way_back(client, make_article):
    """A reader from a tag link saw cards and nothing saying how many, or the way back."""
    make_article(title="One", slug="one", tags=["agents"])
    make_article(title="Two", slug="two", tags=["agents"])
    make_article(title="Hidden", slug="hidden", status=Article.Status.DRAFT, tags=["agents"])

    english = client.get("/tags/agents/").content.decode()
    chinese = client.get("/tags/agents/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "2 articles · " in english and '<a href="/">All articles</a>' in english
    assert "2 篇文章" in chinese and "所有文章" in chinese
