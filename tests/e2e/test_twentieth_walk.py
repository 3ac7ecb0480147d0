"""Walk 20 in a real Chromium: a blog its owner made their own (its name, heading and
description from settings, on a phone and a desktop, in English and Chinese), and Taiwan's
quotation marks on a Traditional Chinese page."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.live_server import LiveServer
from tests.e2e.conftest import CHROMIUM, DESKTOP, screenshot

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

PHONE = {"width": 390, "height": 844}
OWN = {
    "SITE_NAME": "Field Notes",
    "SITE_TAGLINE": "Notes from the allotment",
    "SITE_DESCRIPTION": "What grew, what did not, and why.",
}


@pytest.fixture(scope="module")
def own_site(live_data, tmp_path_factory):
    with LiveServer("own", live_data, OWN, tmp_path_factory.mktemp("spool")) as server:
        yield server.url


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_the_home_page_and_the_panel_are_the_owners(own_site, open_page, viewport, locale):
    page = open_page(viewport=viewport, locale=locale)
    page.goto(own_site + "/")

    expect(page.locator("h1")).to_have_text("Notes from the allotment")
    expect(page.locator(".lede")).to_have_text("What grew, what did not, and why.")
    expect(page.locator(".brand__mark")).to_have_text("F")
    expect(page.locator(".brand__name")).to_have_text("Field Notes")
    expect(page.locator('meta[name="description"]')).to_have_attribute(
        "content", "What grew, what did not, and why."
    )
    name = "phone" if viewport is PHONE else "desktop"
    screenshot(page, f"twentieth-own-home-{name}-{locale}")
    launcher = {"en-US": "Ask Field Notes", "zh-CN": "问问 Field Notes"}[locale]
    page.get_by_role("button", name=launcher).click()
    expect(page.locator("#chat-panel")).to_be_visible()
    expect(page.locator(".chat-panel__mark")).to_have_text("F")
    expect(page.locator("#chat-title")).to_have_text("Field Notes")
    screenshot(page, f"twentieth-own-panel-{name}-{locale}")


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_reader_in_taiwan_reads_corner_brackets(offline_site, open_page, viewport):
    page = open_page(viewport=viewport, locale="zh-TW")
    page.goto(offline_site + "/search/?q=kubernetes+helm+chart+rollout")

    # The query between bidi isolates (red team 33): invisible, but characters of the text.
    sentence = "部落格裡沒有與「\u2068kubernetes helm chart rollout\u2069」相符的內容。"
    expect(page.locator("main")).to_contain_text(sentence)
    expect(page.locator("main")).not_to_contain_text("“")
    screenshot(page, f"twentieth-taiwan-quotes-{'phone' if viewport is PHONE else 'desktop'}")
    expect(page).to_have_title("「\u2068kubernetes helm chart rollout\u2069」 · 搜尋 · Docent")
