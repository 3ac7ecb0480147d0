"""The Atom feed (walk 19): published articles only, newest 20, announced in every page's head."""

import datetime as dt
import xml.etree.ElementTree as ET

import pytest
from django.utils import timezone

from blog.models import Article

pytestmark = pytest.mark.django_db

ATOM = "{http://www.w3.org/2005/Atom}"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def _entries(client) -> list[ET.Element]:
    response = client.get("/feed/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/atom+xml")
    return ET.fromstring(response.content).findall(f"{ATOM}entry")  # noqa: S314 - our own feed


def test_the_feed_lists_published_articles_newest_first_never_a_draft_or_a_scheduled_one(
    client, make_article
):
    now = timezone.now()
    make_article(title="Older", summary="The old one.", published_at=now - dt.timedelta(days=2))
    make_article(title="Newer", summary="The new one.", published_at=now - dt.timedelta(days=1))
    make_article(title="A draft", status=Article.Status.DRAFT)
    make_article(title="Scheduled", published_at=now + dt.timedelta(days=1))

    entries = _entries(client)

    assert [e.findtext(f"{ATOM}title") for e in entries] == ["Newer", "Older"]
    newer = entries[0]
    assert newer.findtext(f"{ATOM}summary") == "The new one."
    assert newer.find(f"{ATOM}link").get("href").endswith("/articles/newer/")
    assert newer.findtext(f"{ATOM}author/{ATOM}name") == "Docent"
    assert newer.findtext(f"{ATOM}published") and newer.findtext(f"{ATOM}updated")


def test_the_feed_holds_the_newest_twenty(client, make_article):
    now = timezone.now()
    for i in range(23):
        make_article(title=f"Post {i}", published_at=now - dt.timedelta(hours=i + 1))

    titles = [e.findtext(f"{ATOM}title") for e in _entries(client)]

    assert titles == [f"Post {i}" for i in range(20)]


def test_each_entry_says_its_language(client, make_article):
    make_article(title="Streaming answers", summary="Token by token.")
    make_article(title="流式回答", slug="liushi", summary="逐个词元地把回答发给读者。")

    languages = {e.findtext(f"{ATOM}title"): e.get(XML_LANG) for e in _entries(client)}

    assert languages == {"Streaming answers": "en", "流式回答": "zh-Hans"}


@pytest.mark.parametrize("path", ["/", "/search/", "/tags/agents/", "/articles/streaming/"])
def test_every_page_announces_the_feed(client, make_article, path):
    make_article(title="Streaming", slug="streaming", tags=["agents"])

    html = client.get(path).content.decode()

    assert '<link rel="alternate" type="application/atom+xml"' in html
    assert 'href="/feed/"' in html


def test_a_feed_reader_that_has_the_newest_version_gets_a_304_until_an_article_is_withdrawn(
    client, make_article
):
    make_article(title="Kept")
    gone = make_article(title="Withdrawn later")
    first = client.get("/feed/")
    assert "public" in first["Cache-Control"] and "max-age=300" in first["Cache-Control"]

    again = client.get("/feed/", HTTP_IF_NONE_MATCH=first["ETag"])
    gone.status = Article.Status.DRAFT
    gone.save()
    after = client.get("/feed/", HTTP_IF_NONE_MATCH=first["ETag"])

    assert again.status_code == 304
    assert after.status_code == 200 and b"Withdrawn later" not in after.content


def test_a_summary_is_text_even_to_a_reader_that_reads_it_as_html(client, make_article):
    make_article(title="Markup", summary="Wrap it in <div> & style it.")

    summary = _entries(client)[0].find(f"{ATOM}summary")

    assert summary.get("type") == "html"
    assert summary.text == "Wrap it in &lt;div&gt; &amp; style it."


def test_a_character_xml_cannot_hold_in_a_title_or_summary_leaves_the_feed_readable(
    client, make_article
):
    # Red team 32: a vertical tab (kept by the admin's form) in one title made the feed a 500
    # for every reader; Django's XML writer refuses C0 controls, and U+FFFF made XML a reader
    # rejects.
    make_article(
        title="Pasted\x0bfrom a word processor", slug="pasted", summary="A bell\x07, a \uffff here."
    )
    make_article(title="Plain", slug="plain")

    entries = {e.findtext(f"{ATOM}title"): e for e in _entries(client)}

    assert set(entries) == {"Pasted from a word processor", "Plain"}
    pasted = entries["Pasted from a word processor"]
    assert pasted.findtext(f"{ATOM}summary") == "A bell , a   here."
