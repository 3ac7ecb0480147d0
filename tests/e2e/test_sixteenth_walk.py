"""The sixteenth first-run walk: what a reader in Taiwan, an author and a reviewer tripped on
first, fixed and checked in Chromium."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.model_server import error_response, text_response
from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.test_chat_panel import ask, wait_answered
from tests.e2e.test_rough_edges import open_chat

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

PHONE = {"width": 390, "height": 844}


def test_a_reader_in_taiwan_sees_the_search_in_the_words_they_typed(offline_site, open_page):
    # The offline model searched with the question folded to Simplified: a reader who typed
    # "什麼是混合檢索？" saw the panel say it had searched for "什么是混合检索？".
    page = open_page(PHONE, locale="zh-TW", is_mobile=True, has_touch=True)
    page.goto(offline_site + "/")
    open_chat(page)
    ask(page, "什麼是混合檢索？")
    wait_answered(page)

    step = page.locator(".chat-turn").last.locator(".chat-step").first
    expect(step).to_contain_text("已搜尋「什麼是混合檢索？」")
    expect(step).not_to_contain_text("什么是混合检索")
    screenshot(page, "sixteenth-taiwan-search")


def test_a_question_kept_in_the_box_is_not_said_to_be_there_once_another_went_out(
    site, scripted, open_page
):
    # The server could not answer; the reader asked something else instead. The old warning
    # still said "Your question is back in the box: press Enter to send it again" over an
    # empty box.
    scripted.enqueue(error_response(500))
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "Is anyone there?")
    first = page.locator(".chat-turn").first
    expect(first.locator(".chat-note__hint")).to_contain_text("Your question is back in the box")

    scripted.enqueue(text_response(["Yes."]))
    ask(page, "What is a step limit?")
    wait_answered(page)

    expect(page.locator(".chat-answer").last).to_have_text("Yes.")
    expect(first.locator(".chat-note--warn")).to_contain_text("isn’t responding right now")
    expect(page.locator(".chat-note__hint")).to_have_count(0)
    expect(page.locator("#chat-input")).to_have_value("")
