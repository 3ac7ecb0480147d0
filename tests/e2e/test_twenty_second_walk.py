"""Walk 22 in a real Chromium: a reader coming back the next day finds yesterday's
conversation named as yesterday's, on a phone and a desktop, in English and Chinese."""

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import CHROMIUM, DESKTOP, screenshot
from tests.e2e.contrast import contrast_failures
from tests.e2e.test_chat_panel import ask, open_chat, wait_answered

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

PHONE = {"width": 390, "height": 844}
LANGUAGES = {
    "en": ("en-US", "Ask Docent", "Yesterday", "Today"),
    "zh-hans": ("zh-CN", "问问 Docent", "昨天", "今天"),
}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_coming_back_the_next_day_names_each_day_of_the_conversation(
    offline_site, open_page, language, viewport
):
    # Yesterday's answers came back as if just given, and today's question sat under them with
    # nothing to say a night had passed.
    locale, launcher, yesterday, today = LANGUAGES[language]
    page = open_page(viewport=viewport, locale=locale)
    page.goto(offline_site + "/")
    page.get_by_role("button", name=launcher).click()
    ask(page, "why cap the agent's steps?")
    wait_answered(page)
    expect(page.locator(".chat-day")).to_have_count(0)  # asked today: no line

    page.clock.set_fixed_time(datetime.now(UTC) + timedelta(days=1))
    page.reload()
    if not page.locator("#chat-panel").is_visible():
        page.get_by_role("button", name=launcher).click()

    day = page.locator("#chat-log > .chat-day")
    expect(day).to_have_text(yesterday)
    kind = "phone" if viewport is PHONE else "desktop"
    page.locator("#chat-log").evaluate("log => { log.scrollTop = 0; }")
    screenshot(page, f"walk22-yesterday-{language}-{kind}")
    assert page.evaluate(
        "document.querySelector('#chat-log > .chat-day').nextElementSibling"
        ".classList.contains('chat-turn')"
    )
    ask(page, "what is reciprocal rank fusion?")
    wait_answered(page)
    expect(day).to_have_text([yesterday, today])
    assert page.evaluate(
        "document.querySelectorAll('#chat-log > .chat-day')[1].nextElementSibling"
        " === [...document.querySelectorAll('#chat-log > .chat-turn')].at(-1)"
    )
    page.locator("#chat-log > .chat-day").nth(1).scroll_into_view_if_needed()
    screenshot(page, f"walk22-next-day-{language}-{kind}")


def test_new_chat_and_its_undo_keep_the_days_right(offline_site, open_page):
    page = open_page(viewport=DESKTOP)
    page.goto(offline_site + "/")
    open_chat(page)
    ask(page, "why cap the agent's steps?")
    wait_answered(page)
    page.clock.set_fixed_time(datetime.now(UTC) + timedelta(days=1))
    page.reload()
    if not page.locator("#chat-panel").is_visible():
        open_chat(page)
    expect(page.locator("#chat-log > .chat-day")).to_have_text("Yesterday")

    page.locator("#chat-new").click()
    expect(page.locator("#chat-log > .chat-day")).to_have_count(0)
    page.get_by_role("button", name="Bring back the last conversation").click()

    expect(page.locator("#chat-log > .chat-day")).to_have_text("Yesterday")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_day_line_meets_aa_contrast(offline_site, open_page, scheme):
    page = open_page(viewport=PHONE, color_scheme=scheme)
    page.goto(offline_site + "/")
    open_chat(page)
    ask(page, "why cap the agent's steps?")
    wait_answered(page)
    page.clock.set_fixed_time(datetime.now(UTC) + timedelta(days=3))
    page.reload()
    if not page.locator("#chat-panel").is_visible():
        open_chat(page)
    day = page.locator("#chat-log > .chat-day")
    expect(day).to_be_visible()
    # Three days back: its weekday, and the date as the blog writes it ("Monday 7 December").
    assert re.fullmatch(r"[A-Z][a-z]+day,? \d{1,2} [A-Z][a-z]+", day.inner_text()), day.inner_text()

    assert contrast_failures(page, "#chat-log > .chat-day") == []
    screenshot(page, f"walk22-day-line-{scheme}-phone")
