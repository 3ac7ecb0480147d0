import datetime as dt
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from blog.models import Article

pytestmark = pytest.mark.django_db


def test_home_lists_published_articles_newest_first(client, make_article):
    now = timezone.now()
    make_article(title="Older", published_at=now - dt.timedelta(days=2))
    make_article(title="Newer", published_at=now - dt.timedelta(days=1))

    response = client.get("/")

    assert response.status_code == 200
    titles = [article.title for article in response.context["page_obj"]]
    assert titles == ["Newer", "Older"]


def test_home_paginates(client, make_article, settings):
    settings.BLOG_PAGE_SIZE = 2
    for i in range(5):
        make_article(title=f"Post {i}", published_at=timezone.now() - dt.timedelta(hours=i))

    page3 = client.get("/?page=3")

    assert [a.title for a in page3.context["page_obj"]] == ["Post 4"]
    assert "Page 3 of 3" in page3.content.decode()


def test_article_page_renders_markdown(client, make_article):
    make_article(title="Hello", slug="hello", body="## A heading\n\nSome *words*.", tags=["agents"])

    response = client.get("/articles/hello/")

    html = response.content.decode()
    assert response.status_code == 200
    assert '<h2 id="sec-a-heading">A heading</h2>' in html
    assert "<em>words</em>" in html
    assert 'href="/tags/agents/"' in html


def test_draft_is_invisible_to_anonymous_visitors(client, make_article):
    make_article(title="Secret plan", slug="secret-plan", status=Article.Status.DRAFT)
    make_article(title="Public", slug="public", tags=["agents"])
    make_article(
        title="Tagged draft", slug="tagged-draft", status=Article.Status.DRAFT, tags=["drafty"]
    )

    assert client.get("/articles/secret-plan/").status_code == 404
    assert "Secret plan" not in client.get("/").content.decode()
    assert "Tagged draft" not in client.get("/tags/agents/").content.decode()
    assert client.get("/tags/drafty/").status_code == 404


def test_scheduled_article_is_hidden_until_its_date(client, make_article):
    make_article(
        title="Tomorrow", slug="tomorrow", published_at=timezone.now() + dt.timedelta(days=1)
    )

    assert client.get("/articles/tomorrow/").status_code == 404
    assert "Tomorrow" not in client.get("/").content.decode()


def test_staff_can_preview_a_draft(staff_client, make_article):
    make_article(title="Work in progress", slug="wip", status=Article.Status.DRAFT)

    response = staff_client.get("/articles/wip/")

    assert response.status_code == 200
    assert "Draft preview" in response.content.decode()


@pytest.mark.parametrize("path", ["/", "/api/articles"])
def test_a_list_of_articles_reads_no_body(client, make_article, path):
    make_article(title="Long", body="A long body. " * 5000)

    with CaptureQueriesContext(connection) as queries:
        assert client.get(path).status_code == 200

    listed = [q["sql"] for q in queries.captured_queries if 'FROM "blog_article"' in q["sql"]]
    assert listed and not any('"blog_article"."body"' in sql for sql in listed)


def test_tag_page_lists_its_articles(client, make_article):
    make_article(title="Tagged", slug="tagged", tags=["pgvector"])
    make_article(title="Untagged", slug="untagged")

    html = client.get("/tags/pgvector/").content.decode()

    assert "Tagged" in html
    assert "Untagged" not in html


def test_an_older_page_of_articles_says_which_page_it_is_instead_of_the_hero(
    client, make_article, settings
):
    # Page 2 opened on the same hero and tag cloud as page 1, which fill a phone's first
    # screen: "Older →" seemed to do nothing, and both pages had one title.
    settings.BLOG_PAGE_SIZE = 1
    for n in range(2):
        make_article(title=f"Essay {n}", slug=f"essay-{n}")
    hero = "Building assistants that only say what they can show"

    first = client.get("/").content.decode()
    second = client.get("/?page=2").content.decode()
    chinese = client.get("/?page=2", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()

    assert hero in first and "<title>Docent</title>" in first
    assert hero not in second and 'class="tag-cloud"' not in second
    assert re.search(r"<h1>\s*Page 2 of 2\s*</h1>", second), second
    assert "<title>Page 2 of 2 · Docent</title>" in second
    assert "<h1>第 2 页，共 2 页</h1>" in chinese


def test_unknown_slug_gets_the_styled_404(client):
    response = client.get("/articles/no-such-thing/")

    assert response.status_code == 404
    assert "There is no page here" in response.content.decode()
    assert "site.css" in response.content.decode()


def test_pages_send_a_csp_without_inline_script(client, make_article):
    make_article(title="Hello", slug="hello")

    csp = client.get("/articles/hello/")["Content-Security-Policy"]

    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp


def test_favicon_ico_redirects_to_the_site_icon(client):
    response = client.get("/favicon.ico")

    # Not permanent: the icon follows SITE_NAME, and a browser kept a 301 for good.
    assert response.status_code == 302
    assert response["Location"] == "/icon.svg"


@pytest.mark.parametrize(
    ("name", "mark"), [("Field Notes", "F"), ("田野笔记", "田"), ("<b&", "&lt;")]
)
def test_the_icon_is_the_sites_mark(client, settings, name, mark):
    # The tab showed a "D" on every owner's blog, whatever SITE_NAME said.
    settings.SITE_NAME = name

    response = client.get("/icon.svg")
    page = client.get("/").content.decode()

    assert response["Content-Type"] == "image/svg+xml"
    assert f">{mark}</text></svg>" in response.content.decode()
    assert '<link rel="icon" href="/icon.svg" type="image/svg+xml">' in page


def test_a_phones_home_screen_gets_the_sites_name_and_mark(client, settings):
    # "Add to Home Screen" had no manifest to read: the page's title and a screenshot's corner.
    settings.SITE_NAME = "田野笔记"

    page = client.get("/").content.decode()
    response = client.get("/manifest.webmanifest")
    manifest = response.json()

    assert '<link rel="manifest" href="/manifest.webmanifest">' in page
    assert response["Content-Type"] == "application/manifest+json"
    assert manifest["name"] == "田野笔记" and manifest["start_url"] == "/"
    assert manifest["icons"] == [{"src": "/icon.svg", "sizes": "any", "type": "image/svg+xml"}]


def test_a_chinese_article_is_served_as_zh_hans(client, make_article):
    make_article(title="文本嵌入入门", slug="zh", summary="把文字变成向量。")
    make_article(title="Embeddings primer", slug="en")

    chinese = client.get("/articles/zh/").content.decode()
    english = client.get("/articles/en/").content.decode()
    home = client.get("/").content.decode()

    assert '<html lang="zh-Hans">' in chinese
    assert '<header class="site-header" lang="en">' in chinese  # the site's own words stay English
    assert '<html lang="en">' in english
    assert '<article class="card" lang="zh-Hans">' in home


@pytest.mark.parametrize(
    ("ui", "date", "lang"), [("en", "7 March 2026", "en"), ("zh-hans", "2026年3月7日", "zh-Hans")]
)
def test_dates_follow_the_language_the_reader_chose_not_the_articles(
    client, make_article, settings, ui, date, lang
):
    when = dt.datetime(2026, 3, 7, 12, tzinfo=dt.UTC)
    make_article(title="文本嵌入入门", slug="zh", summary="把文字变成向量。", published_at=when)
    make_article(title="Embeddings primer", slug="en", published_at=when)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = ui
    time = re.compile(r'<time datetime="[^"]+" data-local-date lang="([^"]+)">([^<]+)</time>')

    for path in ("/articles/zh/", "/articles/en/"):
        assert time.findall(client.get(path).content.decode()) == [(lang, date)], (ui, path)
    assert time.findall(client.get("/").content.decode()) == [(lang, date)] * 2, ui


def test_language_of_mixed_text():
    from blog.language import html_lang, text_language

    assert text_language("用 pgvector 做混合检索：HNSW 与全文搜索") == "zh-hans"
    assert text_language("Hybrid search with pgvector and RRF") == "en"
    assert text_language("Why 向量 matters for search engines in production") == "en"
    assert html_lang("zh-hans") == "zh-Hans" and html_lang("en") == "en"


@pytest.mark.parametrize("path", ["/articles/", "/tags/"])
def test_a_trimmed_address_leads_to_the_article_list_not_a_404(client, path):
    response = client.get(path)

    assert response.status_code == 302 and response["Location"] == "/"


@pytest.mark.parametrize("debug", [True, False])
def test_a_withdrawn_article_gets_the_sites_page_even_with_debug_on(
    client, make_article, settings, debug
):
    # A reader's old chat citation to an unpublished article showed `make run`'s DEBUG page:
    # "Page not found (404)", Django's URL patterns, no way back to the site or the chat.
    settings.DEBUG = debug
    make_article(title="Brewing kombucha", slug="kombucha", status=Article.Status.DRAFT)

    response = client.get("/articles/kombucha/")

    assert response.status_code == 404
    page = response.content.decode()
    assert "There is no page here" in page and "may have been withdrawn" in page
    assert "site.css" in page and "URLconf" not in page


def test_an_edited_slug_s_old_address_leads_to_the_article(client, make_article):
    # The author renamed "budgets" to "chat-budgets": links elsewhere and chat answers that
    # cited the old address got "There is no page here".
    article = make_article(title="Budgets", slug="budgets")
    article.slug = "chat-budgets"
    article.save()

    response = client.get("/articles/budgets/")

    assert response.status_code == 301
    assert response["Location"] == "/articles/chat-budgets/"
    # A browser keeps a bare 301 for good: an hour, in case the address is given out again.
    assert response["Cache-Control"] == "max-age=3600"
    assert client.get("/articles/chat-budgets/").status_code == 200


def test_every_former_address_leads_to_the_newest_and_a_reused_one_to_its_new_article(
    client, make_article
):
    article = make_article(title="Budgets", slug="budgets")
    for slug in ("chat-budgets", "turn-budgets"):
        article.slug = slug
        article.save()
    assert client.get("/articles/budgets/")["Location"] == "/articles/turn-budgets/"
    assert client.get("/articles/chat-budgets/")["Location"] == "/articles/turn-budgets/"

    make_article(title="New budgets", slug="budgets")  # the old address, given out again
    assert client.get("/articles/budgets/").status_code == 200
    assert client.get("/articles/budgets/").context["article"].title == "New budgets"


def test_an_address_given_out_again_is_its_new_article_s_404_once_withdrawn(client, make_article):
    article = make_article(title="Budgets", slug="budgets")
    article.slug = "chat-budgets"
    article.save()
    reused = make_article(title="New budgets", slug="budgets")  # published: the address is its
    reused.status = Article.Status.DRAFT
    reused.save()

    response = client.get("/articles/budgets/")

    assert response.status_code == 404  # not a 301 to the other article
    assert "may have been withdrawn" in response.content.decode()


def test_a_scheduled_post_that_went_live_at_a_former_address_is_the_404_once_withdrawn(
    client, make_article
):
    article = make_article(title="Budgets", slug="budgets")
    article.slug = "chat-budgets"
    article.save()
    later = timezone.now() + dt.timedelta(days=1)
    reused = make_article(title="New budgets", slug="budgets", published_at=later)
    Article.objects.filter(pk=reused.pk).update(published_at=timezone.now())  # the day came
    reused.refresh_from_db()
    reused.status = Article.Status.DRAFT
    reused.save()

    assert client.get("/articles/budgets/").status_code == 404


def test_a_former_address_of_a_withdrawn_article_is_the_sites_404(client, make_article):
    article = make_article(title="Budgets", slug="budgets")
    article.slug = "chat-budgets"
    article.status = Article.Status.DRAFT
    article.save()

    response = client.get("/articles/budgets/")

    assert response.status_code == 404
    assert "may have been withdrawn" in response.content.decode()


def test_a_former_address_of_a_draft_leads_staff_to_its_preview_uncached(
    staff_client, make_article
):
    article = make_article(title="Budgets", slug="budgets", status=Article.Status.DRAFT)
    article.slug = "chat-budgets"
    article.save()

    response = staff_client.get("/articles/budgets/")

    assert response.status_code == 301 and response["Location"] == "/articles/chat-budgets/"
    assert "no-store" in response["Cache-Control"] and "private" in response["Cache-Control"]


def test_a_draft_s_former_address_costs_what_an_unknown_one_does(client, make_article):
    # A query more (the former-address row, then the article) told a renamed draft's old
    # address from a free one by the time its 404 took.
    draft = make_article(title="Launch", slug="secret-launch", status=Article.Status.DRAFT)
    draft.slug = "launch"
    draft.save()
    answers = {}
    for slug in ("never-was", "secret-launch"):
        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/articles/{slug}/").status_code == 404
        answers[slug] = len(queries.captured_queries)
    assert answers["secret-launch"] == answers["never-was"]  # before: one more
