"""A new visitor's walk in a real Chromium: the rough edges found on a first run, fixed."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import CHROMIUM, DESKTOP, screenshot
from tests.e2e.test_chat_panel import open_chat

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)


def _overlaps(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


@pytest.mark.parametrize("width", [DESKTOP["width"], 1024])
def test_older_stays_reachable_beside_the_open_panel(site, open_page, width):
    page = open_page({"width": width, "height": DESKTOP["height"]})
    page.goto(site + "/")
    open_chat(page)
    older = page.get_by_role("link", name=re.compile("Older"))
    older.scroll_into_view_if_needed()
    screenshot(page, f"older-beside-panel-{width}")

    panel = page.locator("#chat-panel").bounding_box()
    for item in (older, page.locator(".card").first):
        assert not _overlaps(item.bounding_box(), panel)
    older.click()  # Playwright refuses a click that would land on the panel
    page.wait_for_url(re.compile(r"\?page=2$"))
    expect(page.locator("#chat-panel")).to_be_visible()  # still open on the next page


def test_the_page_takes_its_width_back_when_the_panel_closes(site, open_page):
    page = open_page()
    page.goto(site + "/")
    main = page.locator("#content")
    centred = main.bounding_box()["x"]
    open_chat(page)
    assert main.bounding_box()["x"] < centred
    page.locator("#chat-close").click()
    assert main.bounding_box()["x"] == centred


def test_on_a_tablet_the_page_scrolls_its_end_above_the_open_panel(site, open_page):
    # 768 px leave no room beside the panel: "Older →" stayed under it however far one scrolled.
    page = open_page({"width": 768, "height": 1024})
    page.goto(site + "/")
    open_chat(page)
    page.mouse.wheel(0, 20_000)
    older = page.get_by_role("link", name=re.compile("Older"))
    expect(older).to_be_in_viewport()
    screenshot(page, "older-above-panel-768")

    assert not _overlaps(older.bounding_box(), page.locator("#chat-panel").bounding_box())
    older.click()
    page.wait_for_url(re.compile(r"\?page=2$"))


def test_on_a_short_laptop_screen_the_open_panel_leaves_the_header_free(site, open_page):
    # At 1280 × 720 the panel reaches up to 20 px from the top, over the header's right end:
    # the English/中文 switch sat under it.
    page = open_page({"width": 1280, "height": 720})
    page.goto(site + "/")
    open_chat(page)
    panel = page.locator("#chat-panel").bounding_box()
    assert panel["y"] < 61  # the panel does reach the header's height
    switch = page.locator(".lang-switch")
    assert not _overlaps(switch.bounding_box(), panel)
    page.get_by_role("button", name="中文").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-Hans")
