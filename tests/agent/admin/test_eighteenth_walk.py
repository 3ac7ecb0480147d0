"""An author's second day (walk 18): deleting an article the assistant's answers cite."""

import pytest

from blog.models import Article
from tests.agent.admin.factories import make_conversation, make_turn
from tests.e2e.conftest import sign_in

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


@pytest.fixture
def editor(transactional_db) -> None:
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("ed", password="a-long-password", is_staff=True,
                                         is_superuser=True)  # fmt: skip
    Article.objects.create(title="Anatomy of the agent loop", slug="anatomy", body="B.")


@pytest.mark.e2e
def test_on_a_phone_an_articles_title_is_not_squeezed_a_word_a_line(live_server, editor, browser):
    # The title is each row's <th>: the rule giving it 14rem named td.field-title and never
    # applied, so "Anatomy of the agent loop" took five lines 98 px wide beside one-line dates.
    page = browser.new_page(viewport={"width": 390, "height": 844})
    sign_in(page, live_server.url, "ed")
    page.goto(f"{live_server.url}/admin/blog/article/")

    width = page.evaluate("document.querySelector('#result_list th.field-title').offsetWidth")
    assert width >= 14 * 16, width
    page.set_viewport_size({"width": 1280, "height": 800})  # and the list still fits a desktop
    fits = "(() => { const r = document.querySelector('.results'); "
    fits += "return r.scrollWidth <= r.clientWidth; })()"
    assert page.evaluate(fits)
    page.close()
