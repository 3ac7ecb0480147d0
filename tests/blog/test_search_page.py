"""The reader's search page (walk 19): `/search/?q=`, the same search and bar as `/api/search`."""

import pytest
from django.urls import reverse

from blog.indexing import articles_reindex
from blog.models import Article
from blog.search_page import QUERY_MAX_LENGTH, passage_text
from config.origins import SEARCH_PAGE_PATH
from tests.blog.embeddings_server import eight_dimension_backend

pytestmark = pytest.mark.django_db


@pytest.fixture
def articles(make_article):
    make_article(
        title="Airships",
        slug="airships",
        summary="Lighter than air.",
        body="## Lift\n\nHelium lifts the envelope of an airship.",
        tags=["flight"],
    )
    make_article(title="Boats", body="Hulls float on water.", tags=["sea"])
    make_article(
        title="Secret draft", body="Helium airship envelope plans.", status=Article.Status.DRAFT
    )
    articles_reindex()


def test_the_page_is_where_the_limits_look_for_it():
    assert reverse("blog:search") == SEARCH_PAGE_PATH


def test_matching_articles_come_as_cards_with_the_matched_passage(client, articles):
    html = client.get("/search/", {"q": "helium airship envelope"}).content.decode()

    cards = html.split('class="cards"')[1]
    assert "Airships" in cards and "Secret draft" not in cards
    assert (
        '<p class="card__passage"><mark>Helium</mark> lifts the <mark>envelope</mark> of an '
        "<mark>airship</mark>.</p>"
    ) in cards  # the query's words marked, so the reader sees why it matched
    assert 'href="/articles/airships/#sec-lift"' in cards  # the passage's section
    assert "1 min read" in cards and 'href="/tags/flight/"' in cards
    assert "1 article matches “\u2068helium airship envelope\u2069”" in html


def test_the_page_shows_what_the_api_returns(client, articles):
    for query in ["helium airship envelope", "kubernetes helm chart rollout", "hulls"]:
        api = [hit["url"] for hit in client.get("/api/search", {"q": query, "limit": 10}).json()]
        page = client.get("/search/", {"q": query}).context["results"]
        assert [result.article.get_absolute_url() for result in page] == api


@pytest.mark.parametrize(
    ("language", "said", "ask"),
    # The query between bidi isolates (blog_tags.isolated).
    [
        (
            "en",
            "Nothing in the blog matches “\u2068kubernetes helm chart rollout\u2069”.",
            "Ask the assistant",
        ),
        (
            "zh-hans",
            "博客里没有与“\u2068kubernetes helm chart rollout\u2069”相符的内容。",
            "问助手",
        ),
        (
            "zh-hant",
            "部落格裡沒有與「\u2068kubernetes helm chart rollout\u2069」相符的內容。",
            "問助手",
        ),
    ],
)
def test_below_the_bar_it_says_nothing_matches_and_offers_the_assistant(
    client, articles, language, said, ask
):
    response = client.get(
        "/search/", {"q": "kubernetes helm chart rollout"}, HTTP_ACCEPT_LANGUAGE=language
    )

    html = response.content.decode()
    assert response.status_code == 200 and said in html
    assert f'data-chat-open data-chat-ask="kubernetes helm chart rollout">{ask}</button>' in html


def test_an_empty_query_is_a_page_that_says_what_to_do(client, django_assert_max_num_queries):
    with django_assert_max_num_queries(5) as queries:
        empty = client.get("/search/")
    assert not [q for q in queries.captured_queries if "search_vector" in q["sql"]]  # no search
    blank = client.get("/search/", {"q": "   "})

    assert empty.status_code == blank.status_code == 200
    assert "a question works as well as a few words" in empty.content.decode()
    assert "autofocus" in empty.content.decode()


def test_an_over_long_query_is_refused_with_its_words_kept(client):
    query = "pgvector " * 60  # 540 characters
    response = client.get("/search/", {"q": query})

    html = response.content.decode()
    assert response.status_code == 400
    assert f"This search is {len(query)} characters long" in html
    assert f"at most {QUERY_MAX_LENGTH} characters" in html
    assert f'value="{query}"' in html and 'aria-invalid="true"' in html


def test_a_nul_in_the_query_says_so_on_the_search_page_and_keeps_the_rest(client):
    response = client.get("/search/?q=hnsw%00%20index", HTTP_ACCEPT_LANGUAGE="zh-hans")

    html = response.content.decode()
    assert response.status_code == 400
    assert "无法搜索的字符" in html and 'value="hnsw index"' in html


def test_search_unavailable_is_said_on_the_page(client, articles):
    # The index was built by the local model (384 dimensions); this endpoint answers 8.
    with eight_dimension_backend():
        response = client.get("/search/", {"q": "helium"})

    assert response.status_code == 503
    assert "Search is unavailable right now" in response.content.decode()


def test_the_header_links_the_search_page_on_every_page(client, make_article):
    make_article(title="Post", slug="post")

    for path in ["/", "/articles/post/", "/search/", "/no-such-page/"]:
        assert 'class="site-nav__search" href="/search/"' in client.get(path).content.decode()


def test_a_querys_markup_is_marked_as_text(client, articles):
    html = client.get("/search/", {"q": "<b>helium</b> airship"}).content.decode()

    cards = html.split('class="cards"')[1]
    assert "<mark>Helium</mark>" in cards and "<b>" not in cards


def test_a_passage_reads_as_text_not_markdown():
    excerpt = (
        "## Lift\n\n**Helium** lifts the [envelope](https://x.example/e).\n\n```sql\nSELECT 1;\n```"
    )

    assert passage_text(excerpt) == "Lift Helium lifts the envelope. SELECT 1;"


@pytest.mark.parametrize("unclosed", ["[", "![", "[x]("])
def test_a_passage_of_unclosed_links_reads_in_one_pass(unclosed):
    # From every "[" the label ran to the passage's end when nothing closed it: 20 kB took 1.7 s
    # (quadratic), so this 200 kB one took minutes; a pass over it now.
    text = unclosed * (200_000 // len(unclosed))
    assert passage_text(text).startswith(unclosed.strip())


def test_another_sites_image_cannot_spend_a_readers_searches(client):
    response = client.get("/search/", {"q": "hnsw"}, HTTP_SEC_FETCH_SITE="cross-site")
    followed = client.get(
        "/search/",
        {"q": ""},
        HTTP_SEC_FETCH_SITE="cross-site",
        HTTP_SEC_FETCH_MODE="navigate",
        HTTP_SEC_FETCH_DEST="document",
        HTTP_SEC_FETCH_USER="?1",
    )

    assert response.status_code == 403
    assert followed.status_code == 200  # a search engine's result the reader clicked


@pytest.mark.parametrize(
    ("language", "title"),
    [
        ("en", "<title>“\u2068helm chart\u2069” · Search · Docent</title>"),
        ("zh-hant", "<title>「\u2068helm chart\u2069」 · 搜尋 · Docent</title>"),
    ],
)
def test_the_pages_title_quotes_the_query_in_the_readers_marks(client, language, title):
    html = client.get("/search/?q=helm+chart", HTTP_ACCEPT_LANGUAGE=language).content.decode()

    assert title in html
