"""An author's second day (walk 18): deleting an article the assistant's answers cite."""

import pytest

from blog.models import Article
from tests.agent.admin.factories import make_conversation, make_turn

pytestmark = pytest.mark.django_db


def _cited(article: Article, conversations: int = 2, answers_each: int = 2) -> None:
    citation = {"article_id": article.pk, "title": article.title, "url": article.get_absolute_url()}
    for _ in range(conversations):
        conversation = make_conversation()
        for _ in range(answers_each):
            make_turn(conversation, citations=[citation])


def test_deleting_a_cited_article_says_how_many_answers_cite_it(staff_client):
    # The confirmation said only "Articles: 1": nothing about the answers readers still have.
    cited = Article.objects.create(title="Cited", slug="cited", body="B.", status="published")
    other = Article.objects.create(title="Other", slug="other", body="B.", status="published")
    _cited(cited)
    _cited(other, conversations=1, answers_each=1)

    page = staff_client.get(f"/admin/blog/article/{cited.pk}/delete/").content.decode()

    assert "4 of the assistant’s answers cite this article." in page
    assert "set it back to Draft instead" in page


def test_the_bulk_confirmation_counts_the_chosen_articles_answers_in_chinese(staff_client):
    one = Article.objects.create(title="One", slug="one", body="B.", status="published")
    two = Article.objects.create(title="Two", slug="two", body="B.", status="published")
    _cited(one, conversations=1, answers_each=1)
    _cited(two, conversations=1, answers_each=2)

    page = staff_client.post(
        "/admin/blog/article/",
        {"action": "delete_selected", "_selected_action": [one.pk, two.pk]},
        HTTP_ACCEPT_LANGUAGE="zh-hans",
    ).content.decode()

    assert "助手的回答中有 3 条引用了这些文章" in page


def test_an_article_nobody_cited_and_a_tag_get_no_note(staff_client):
    article = Article.objects.create(title="Quiet", slug="quiet", body="B.", status="published")

    page = staff_client.get(f"/admin/blog/article/{article.pk}/delete/").content.decode()

    assert "dc-delete-cited" not in page and "Articles: 1" in page
