"""The thirteenth first-run walk, as three people: a reader in Taiwan on a phone, a new author,
and the operator the morning after. What each tripped on first, fixed and checked in Chromium."""

from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.test_chat_panel import ask, wait_answered
from tests.e2e.test_rough_edges import ask_and_wait, open_chat, reviewer, sign_in  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

PHONES = {"portrait": {"width": 390, "height": 844}, "landscape": {"width": 844, "height": 390}}
DESKTOP = {"width": 1280, "height": 800}
# Both scripts could write it (台 is Simplified only, 氣 Traditional only): the site's decides.
WEATHER = "台北今天天氣如何？"


@pytest.mark.parametrize("shape", PHONES)
def test_a_reader_in_taiwan_reads_the_panel_and_its_decline_in_traditional(
    offline_site, open_page, shape
):
    # The site had only Simplified Chinese: a zh-TW browser got the placeholder, the steps,
    # "来源", "复制" and the decline in a script its reader does not write.
    page = open_page(PHONES[shape], locale="zh-TW", is_mobile=True, has_touch=True)
    page.goto(offline_site + "/")
    expect(page.locator("html")).to_have_attribute("lang", "zh-Hant")
    open_chat(page)
    expect(page.locator("#chat-input")).to_have_attribute("placeholder", "輸入你的問題…")
    expect(page.locator("#chat-offline-badge")).to_contain_text("摘錄模式")

    ask(page, WEATHER)
    wait_answered(page)

    turn = page.locator(".chat-turn").last
    answer = turn.locator(".chat-answer p")
    expect(answer.first).to_have_text("我在這個部落格的文章裡沒有找到相關內容。")
    # The articles offered instead, in the same script (walk 23's offer was Simplified here).
    expect(answer.last).to_contain_text("可以改問這幾篇文章：")
    expect(turn.locator(".chat-step__meta").first).to_contain_text("沒有結果")
    expect(turn.get_by_role("button", name="複製回答", exact=True)).to_be_visible()
    panel = page.locator("#chat-panel").bounding_box()
    assert panel["x"] >= 0 and panel["x"] + panel["width"] <= PHONES[shape]["width"] + 1
    screenshot(page, f"thirteenth-taiwan-{shape}")


def test_the_dashboard_says_what_the_blog_could_not_answer_and_leads_to_writing_it(
    offline_site,
    open_page,
    reviewer,  # noqa: F811
):
    # "Unanswered 3" and "Write about the top ones next" named neither the questions nor a place
    # to write: the operator went through two more pages and then looked for the article form.
    question = "How do I bake sourdough bread at home?"
    ask_and_wait(offline_site, open_page(), question)
    page = open_page(DESKTOP)
    sign_in(page, offline_site, reviewer)

    page.goto(f"{offline_site}/admin/agent/conversation/dashboard/")
    # The most asked first: other tests' questions may outnumber this one.
    top = page.get_by_test_id("unanswered-top").locator(".dc-question").first
    expect(top).to_be_visible()
    screenshot(page, "thirteenth-dashboard")
    asked = top.locator(".dc-question__text").inner_text()
    top.get_by_role("link", name="Write an article about this").click()

    expect(page).to_have_url(
        f"{offline_site}/admin/blog/article/add/?{urlencode({'title': asked})}"
    )
    expect(page.locator("#id_title")).to_have_value(asked)

    page.goto(f"{offline_site}/admin/agent/conversation/unanswered/")
    listed = page.locator(".dc-question", has_text=question)
    expect(listed.get_by_role("link", name="Write an article about this")).to_have_attribute(
        "href", f"/admin/blog/article/add/?{urlencode({'title': question})}"
    )
    screenshot(page, "thirteenth-unanswered")


@pytest.fixture
def new_articles(live_data):
    """Delete the articles a test wrote (the database is shared by the package's tests)."""
    from blog.models import Article

    before = set(Article.objects.values_list("pk", flat=True))
    yield
    Article.objects.exclude(pk__in=before).delete()


@pytest.mark.parametrize(
    ("locale", "required", "taken"),
    [("en-US", "A published article needs a body", "is already taken by"),
     ("zh-CN", "已发布的文章需要正文", "已被")],
)  # fmt: skip
def test_a_new_author_saves_a_bare_draft_and_learns_whose_slug_is_taken(
    site,
    open_page,
    articles,
    new_articles,
    reviewer,  # noqa: F811
    locale,
    required,
    taken,
):
    # A draft of a title alone was refused ("This field is required." on the body), and a taken
    # slug said "Article with this Slug already exists." without naming the article or a way out.
    page = open_page(DESKTOP, locale=locale)
    sign_in(page, site, reviewer)
    page.goto(f"{site}/admin/blog/article/add/")
    page.fill("#id_title", f"Walk thirteen draft {locale}")
    page.locator("input[name=_continue]").click()
    expect(page.locator(".messagelist .success")).to_have_count(1)
    expect(page.locator(".errornote")).to_have_count(0)

    page.select_option("#id_status", "published")
    page.locator("input[name=_continue]").click()
    expect(page.locator(".field-body .errorlist")).to_contain_text(required)

    page.goto(f"{site}/admin/blog/article/add/")
    page.fill("#id_title", f"Walk thirteen taken {locale}")
    # The body before the slug: leaving the title fills the slug in from it (Django's script).
    page.fill("#id_body", "A body.")
    page.fill("#id_slug", "pgvector-and-hnsw")
    page.locator("input[name=_save]").click()
    error = page.locator(".field-slug .errorlist")
    expect(error).to_contain_text(taken)
    expect(error).to_contain_text(articles["pgvector-and-hnsw"]["title"])
    expect(error).to_contain_text("pgvector-and-hnsw-2")
    screenshot(page, f"thirteenth-slug-taken-{locale}")
