"""The sixteenth first-run walk: what a reader in Taiwan, an author and a reviewer tripped on
first, fixed and checked in Chromium."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

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
    expect(step).to_contain_text("已搜尋“什麼是混合檢索？”")
    expect(step).not_to_contain_text("什么是混合检索")
    screenshot(page, "sixteenth-taiwan-search")
