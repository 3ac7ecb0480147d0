"""Reading time (walk 19): counted once at the save, shown on cards, the article and its pager."""

import datetime as dt
import math

import pytest
from django.utils import timezone

from blog.models import Article
from blog.reading import HAN_PER_MINUTE, MAX_MINUTES, WORDS_PER_MINUTE, reading_minutes


def test_english_is_counted_in_words_and_rounded_up():
    assert reading_minutes("word " * WORDS_PER_MINUTE) == 1
    assert reading_minutes("word " * (WORDS_PER_MINUTE + 1)) == 2
    assert reading_minutes("") == 1  # a note of three lines still reads as "1 min"


def test_chinese_is_counted_in_characters():
    assert reading_minutes("字" * HAN_PER_MINUTE) == 1
    assert reading_minutes("字" * (HAN_PER_MINUTE * 3 + 1)) == 4


def test_a_mixed_text_adds_both_and_skips_link_targets():
    text = "向量 " * 255 + "[pgvector](https://example.com/a/very/long/path/of/words) " * 238
    # 510 characters (two minutes) and 238 words (one): link targets are not read.
    assert reading_minutes(text) == 3


@pytest.mark.django_db
def test_the_save_counts_it_and_an_edit_recounts_it(make_article):
    article = make_article(title="Long", body="word " * 1000)
    assert Article.objects.get(pk=article.pk).reading_minutes == 5

    article.body = "short"
    article.save(update_fields=["body"])
    assert Article.objects.get(pk=article.pk).reading_minutes == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("language", "said"),
    [("en", "5 min read"), ("zh-hans", "5 分钟阅读"), ("zh-hant", "5 分鐘閱讀")],
)
def test_cards_the_article_and_its_pager_say_it(client, make_article, language, said):
    now = timezone.now()
    make_article(
        title="Older", slug="older", body="word " * 1000, published_at=now - dt.timedelta(days=2)
    )
    make_article(
        title="This", slug="this", body="word " * 1000, published_at=now - dt.timedelta(days=1)
    )
    make_article(title="Tagged", body="word " * 1000, tags=["agents"])
    headers = {"HTTP_ACCEPT_LANGUAGE": language}

    home = client.get("/", **headers).content.decode()
    tag = client.get("/tags/agents/", **headers).content.decode()
    page = client.get("/articles/this/", **headers).content.decode()

    assert home.count(said) == 3 and tag.count(said) == 1
    header, pager = page.split('class="article__header"')[1], page.split('class="article-pager"')[1]
    assert said in header.split("</header>")[0]
    assert pager.count(said) == 2  # the newer and the older article's cards


@pytest.mark.django_db
def test_the_pager_reads_no_more_than_its_two_rows(
    client, make_article, django_assert_max_num_queries
):
    now = timezone.now()
    for days in (3, 2, 1):
        make_article(
            title=f"Post {days}", slug=f"post-{days}", published_at=now - dt.timedelta(days=days)
        )
    client.get("/articles/post-2/")  # warm the rendered-body cache and the session machinery

    # Six, and one for the article's translations (walk 20's links under its summary).
    with django_assert_max_num_queries(7) as queries:
        client.get("/articles/post-2/")

    # The pager's cards read their reading time and language from the rows already fetched.
    assert not [q for q in queries.captured_queries if 'WHERE "blog_article"."id" =' in q["sql"]]


@pytest.mark.django_db
def test_the_admins_preview_says_the_reading_time_a_save_would_give(staff_client):
    form = {"title": "Long draft", "slug": "", "summary": "", "tags": [], "status": "draft",
            "body": "word " * 1000}  # fmt: skip

    html = staff_client.post("/admin/blog/article/preview/", form).content.decode()

    assert "5 min read" in html and not Article.objects.exists()


def test_a_body_of_unclosed_links_is_counted_in_one_pass():
    # Red team 32: `\]\([^)]*\)` ran from every "](" to the end when none closed: a megabyte of
    # "[x](" took 305 s on one save or admin preview (40 kB took 0.7 s). Now a target stops at a
    # space or a parenthesis, and this returns at once (before the fix, the test hung for minutes).
    assert reading_minutes("[x](" * 250_000) == math.ceil(250_000 / WORDS_PER_MINUTE)
    assert reading_minutes("](" + "a" * 1_000_000) == 1


def test_a_body_too_long_for_the_column_reads_as_its_largest_value():
    # PositiveSmallIntegerField: 8 million words (16 MB) would not fit in the column.
    assert reading_minutes("a " * (WORDS_PER_MINUTE * MAX_MINUTES + 1)) == MAX_MINUTES
