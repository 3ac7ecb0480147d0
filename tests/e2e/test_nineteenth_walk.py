"""Walk 19 in a real Chromium: what a reader from a search engine expects of a blog (a search
page reached from the header, reading times), on a phone and a desktop, in three languages."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import CHROMIUM, DESKTOP, screenshot
from tests.e2e.test_chat_panel import ask, conversation_id, open_chat, wait_answered

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

PHONE = {"width": 390, "height": 844}
LOCALES = {"en": "en-US", "zh-hans": "zh-CN", "zh-hant": "zh-TW"}


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_the_header_leads_to_the_search_page_and_its_results(offline_site, open_page, viewport):
    page = open_page(viewport=viewport)
    page.goto(offline_site + "/")

    link = page.locator(".site-header").get_by_role("link", name="Search", exact=True)
    expect(link).to_be_visible()
    link.click()
    expect(page).to_have_url(offline_site + "/search/")
    box = page.get_by_role("searchbox", name="Search the articles")
    expect(box).to_be_focused()
    box.fill("How do agents limit their steps?")
    box.press("Enter")

    cards = page.locator(".cards .card")
    expect(cards.first).to_be_visible()
    expect(cards.first.locator(".card__passage")).not_to_be_empty()
    expect(cards.first.locator(".meta__read")).to_contain_text("min read")
    expect(box).to_have_value("How do agents limit their steps?")
    # Nothing on the page is wider than the phone's screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]


def test_nothing_matching_offers_the_assistant_with_the_question_in_its_box(
    offline_site, open_page
):
    page = open_page(viewport=PHONE)
    page.goto(offline_site + "/search/?q=kubernetes+helm+chart+rollout")

    expect(page.get_by_test_id("no-match")).to_contain_text("Nothing in the blog matches")
    page.get_by_role("button", name="Ask the assistant").click()

    expect(page.locator("#chat-input")).to_be_visible()
    expect(page.locator("#chat-input")).to_have_value("kubernetes helm chart rollout")


SCREENS = {
    "home": "/",
    "search-empty": "/search/",
    "search-results": "/search/?q=pgvector+HNSW+index",
    "search-none": "/search/?q=kubernetes+helm+chart+rollout",
    "search-too-long": "/search/?q=" + "pgvector+" * 60,
}


@pytest.mark.parametrize("language", LOCALES)
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_walk19_screens(offline_site, open_page, articles, language, viewport):
    """The new screens, for a person to look at (test-artifacts/screenshots/chat-walk19-*)."""
    page = open_page(viewport=viewport, locale=LOCALES[language])
    kind = "phone" if viewport is PHONE else "desktop"
    for name, path in SCREENS.items():
        page.goto(offline_site + path)
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], name
        screenshot(page, f"walk19-{name}-{language}-{kind}")
    page.goto(offline_site + "/articles/why-step-limits-matter/")
    expect(page.locator(".article__header .meta__read")).to_be_visible()
    screenshot(page, f"walk19-article-{language}-{kind}")


def test_new_chat_offers_the_conversation_back_until_a_new_question(offline_site, open_page):
    # "New chat" took a conversation off the panel with one click and no way back.
    page = open_page(viewport=PHONE)
    page.goto(offline_site + "/")
    open_chat(page)
    ask(page, "How do agents limit their steps?")
    wait_answered(page)
    before = conversation_id(page)

    page.locator("#chat-new").click()
    expect(page.locator(".chat-turn")).to_have_count(0)
    page.get_by_role("button", name="Bring back the last conversation").click()

    expect(page.locator(".chat-turn")).to_have_count(1)
    expect(page.locator(".chat-turn").first).to_contain_text("How do agents limit their steps?")
    assert conversation_id(page) == before
    expect(page.locator(".chat-undo")).to_have_count(0)

    page.locator("#chat-new").click()
    screenshot(page, "walk19-new-chat-undo-en-phone")
    ask(page, "What is hybrid search?")
    expect(page.locator(".chat-undo")).to_have_count(0)  # the new conversation has begun
    wait_answered(page)
    assert conversation_id(page) != before
