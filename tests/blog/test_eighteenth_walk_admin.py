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
