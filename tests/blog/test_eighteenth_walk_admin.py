"""The admin for a reviewer who may only view (walk 18): an article's page without the form's
instructions for fields they cannot edit."""

import pytest

from blog.models import Article
from tests.agent.admin.test_seventeenth_walk import viewer_client

pytestmark = pytest.mark.django_db

HELP = [
    "One or two sentences for lists and search results.",
    "Raw HTML is sanitized on display.",
    "a later date schedules the",
]


def test_a_view_only_reviewer_reads_an_article_without_the_forms_help(staff_client):
    article = Article.objects.create(title="T", slug="t", summary="S.", body="B.", status="draft")
    path = f"/admin/blog/article/{article.pk}/change/"

    seen = viewer_client().get(path).content.decode()

    assert "S." in seen and "B." in seen
    assert not [text for text in HELP if text in seen]
    assert "helptext" not in seen
    editing = staff_client.get(path).content.decode()
    assert all(text in editing for text in HELP)
    adding = staff_client.get("/admin/blog/article/add/").content.decode()
    assert all(text in adding for text in HELP)


def _author(name: str):
    from django.contrib.auth import get_user_model
    from django.test import Client

    user = get_user_model().objects.create_user(name, password="pw", is_staff=True)
    user.is_superuser = True
    user.save()
    client = Client()
    client.force_login(user)
    return client


def _opened(client, path: str) -> dict:
    """The change form as this author's browser holds it: its fields, the version among them."""
    import re

    html = client.get(path).content.decode()
    version = re.search(r'name="opened_version" value="([^"]*)"', html)
    assert version, "the form carries the version it was opened on"
    article = Article.objects.get(pk=int(path.split("/")[-3]))
    return {
        "title": article.title,
        "slug": article.slug,
        "summary": article.summary,
        "body": article.body,
        "status": article.status,
        "published_at_0": "",
        "published_at_1": "",
        "opened_version": version.group(1),
    }


def test_two_authors_editing_at_once_the_second_save_is_refused_not_undoing_the_first():
    article = Article.objects.create(title="Zeppelins", slug="zeppelins", body="Gas.")
    path = f"/admin/blog/article/{article.pk}/change/"
    ana, ben = _author("ana"), _author("ben")
    ana_form, ben_form = _opened(ana, path), _opened(ben, path)

    saved = ana.post(path, {**ana_form, "summary": "Ana's summary."})
    assert saved.status_code == 302
    refused = ben.post(path, {**ben_form, "title": "Ben's title"})

    assert refused.status_code == 200  # the form again, with Ben's words kept
    html = refused.content.decode()
    assert "ana saved this article at" in html and "nothing was saved" in html
    assert 'value="Ben&#x27;s title"' in html
    article.refresh_from_db()
    assert (article.summary, article.title) == ("Ana's summary.", "Zeppelins")


def test_an_author_saving_twice_in_a_row_is_not_refused():
    article = Article.objects.create(title="Zeppelins", slug="zeppelins", body="Gas.")
    path = f"/admin/blog/article/{article.pk}/change/"
    ana = _author("ana")

    first = ana.post(path, {**_opened(ana, path), "summary": "One.", "_continue": "1"})
    second = ana.post(path, {**_opened(ana, path), "summary": "Two."})

    assert (first.status_code, second.status_code) == (302, 302)
    article.refresh_from_db()
    assert article.summary == "Two."


def test_the_refusal_reads_in_chinese(settings):
    article = Article.objects.create(title="Zeppelins", slug="zeppelins", body="Gas.")
    path = f"/admin/blog/article/{article.pk}/change/"
    ana, ben = _author("ana"), _author("ben")
    ben_form = _opened(ben, path)
    ana.post(path, {**_opened(ana, path), "summary": "One."})

    html = ben.post(path, ben_form, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "ana 在" in html and "什么都没有保存" in html
