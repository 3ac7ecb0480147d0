"""A blog made its owner's own: its name, heading and description come from settings
(blog/site.py), not the demo blog's words."""

import pytest

pytestmark = pytest.mark.django_db

OWN = {
    "SITE_NAME": "Field Notes",
    "SITE_TAGLINE": "Notes from the allotment",
    "SITE_DESCRIPTION": "What grew, what did not, and why.",
}


@pytest.fixture
def own_blog(settings, make_article):
    for name, value in OWN.items():
        setattr(settings, name, value)
    make_article(title="Tomatoes in a wet June", slug="tomatoes")


@pytest.mark.parametrize("language", ["en", "zh-CN"])
def test_the_home_page_says_what_the_owner_set_in_every_language(client, own_blog, language):
    html = client.get("/", HTTP_ACCEPT_LANGUAGE=language).content.decode()

    assert "<h1>Notes from the allotment</h1>" in html
    assert '<p class="lede">What grew, what did not, and why.</p>' in html
    assert '<meta name="description" content="What grew, what did not, and why.">' in html
    assert '<span class="brand__mark" aria-hidden="true">F</span>' in html
    assert '<span class="chat-panel__mark" aria-hidden="true">F</span>' in html
    for demo in ("Building assistants", "tool-driven", "构建"):
        assert demo not in html


def test_the_feed_is_subtitled_with_the_owners_description(client, own_blog):
    xml = client.get("/feed/").content.decode()

    assert "<title>Field Notes</title>" in xml
    assert "<subtitle>What grew, what did not, and why.</subtitle>" in xml


def test_unset_the_demo_blogs_words_are_shown_translated(client, make_article):
    make_article(title="Anything", slug="anything")

    english = client.get("/").content.decode()
    chinese = client.get("/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()

    assert "<h1>Building assistants that only say what they can show</h1>" in english
    assert '<span class="brand__mark" aria-hidden="true">D</span>' in english
    assert "Building assistants" not in chinese and "<h1>" in chinese


@pytest.mark.parametrize(
    ("language", "header"), [("en", "Field Notes admin"), ("zh-CN", "Field Notes 管理后台")]
)
def test_the_admin_is_named_after_the_site(client, own_blog, language, header):
    html = client.get("/admin/login/", HTTP_ACCEPT_LANGUAGE=language).content.decode()

    assert f'<a href="/admin/">{header}</a>' in html
    assert "Docent" not in html
