"""An article and its translation lead to each other (Article.translation_of)."""

import pytest

from blog.models import Article

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(make_article):
    english = make_article(
        title="Why step limits matter", slug="step-limits", summary="A cap on model calls."
    )
    chinese = make_article(
        title="为什么要限制步数",
        slug="wei-shen-me",
        summary="给模型调用设上限。",
        translation_of=english,
    )
    return english, chinese


def test_the_original_links_its_translation_and_the_translation_its_original(client, pair):
    english, chinese = pair

    original = client.get("/articles/step-limits/").content.decode()
    translation = client.get("/articles/wei-shen-me/", HTTP_ACCEPT_LANGUAGE="zh-CN")
    translation = translation.content.decode()

    assert (
        '<a href="/articles/wei-shen-me/" hreflang="zh-Hans"><span lang="zh-Hans">'
        "中文: 为什么要限制步数</span></a>"
    ) in original
    assert '<link rel="alternate" hreflang="zh-Hans" href="/articles/wei-shen-me/">' in original
    assert "其他语言版本" in translation
    assert "English: Why step limits matter" in translation
    assert '<link rel="alternate" hreflang="en" href="/articles/step-limits/">' in translation


def test_a_draft_translation_is_not_linked_and_an_article_without_one_says_nothing(client, pair):
    english, chinese = pair
    chinese.status = Article.Status.DRAFT
    chinese.save()

    html = client.get("/articles/step-limits/").content.decode()

    assert "Also in" not in html and "wei-shen-me" not in html


def test_translations_of_one_original_link_each_other(client, pair, make_article):
    english, chinese = pair
    make_article(title="Pourquoi limiter", slug="pourquoi", translation_of=english)

    html = client.get("/articles/wei-shen-me/").content.decode()

    assert 'href="/articles/pourquoi/"' in html and 'href="/articles/step-limits/"' in html


def test_the_article_form_offers_the_original_by_title(staff_client):
    html = staff_client.get("/admin/blog/article/add/").content.decode()

    assert 'name="translation_of"' in html and "admin-autocomplete" in html


def test_the_originals_suggestions_match_titles_not_bodies(staff_client, make_article):
    make_article(title="What a tool-driven agent is", body="It keeps step limits.")
    make_article(title="Why step limits matter", slug="step-limits")
    params = {"term": "step limits", "app_label": "blog", "model_name": "article"}
    params["field_name"] = "translation_of"

    found = staff_client.get("/admin/autocomplete/", params).json()["results"]

    assert [result["text"] for result in found] == ["Why step limits matter"]
