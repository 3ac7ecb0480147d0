"""Screenshots for people to look at: 1280 and 375 px, light and dark, English and Chinese."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.test_chat_panel import wait_answered

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

ARTICLE = {"en": "why-step-limits-matter", "zh": "embeddings-primer-zh"}
LOCALE = {"en": "en-US", "zh": "zh-CN"}
SUMMARIZE = {"en": "Summarize this article", "zh": "总结这篇文章"}


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [1280, 375])
def test_screenshots(offline_site, open_page, width, scheme, language):
    page = open_page(viewport={"width": width, "height": 860 if width > 400 else 740},
                     locale=LOCALE[language])  # fmt: skip
    page.emulate_media(color_scheme=scheme)
    name = f"{width}-{scheme}-{language}"
    page.goto(offline_site + "/")
    screenshot(page, f"home-{name}")
    page.goto(f"{offline_site}/articles/{ARTICLE[language]}/")
    screenshot(page, f"article-{name}")
    page.locator("#chat-launcher").click()
    expect(page.locator("#chat-panel")).to_be_visible()
    page.get_by_role("button", name=SUMMARIZE[language]).click()
    wait_answered(page)
    expect(page.locator(".chat-answer")).not_to_be_empty()
    screenshot(page, f"panel-{name}")
