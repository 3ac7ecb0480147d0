"""A new visitor's walk in a real Chromium: the rough edges found on a first run, fixed."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import CHROMIUM, DESKTOP, screenshot
from tests.e2e.sockets import ChatRoute
from tests.e2e.test_chat_panel import ask, open_chat
from tests.e2e.test_panel_fixes import LINE_WIDTHS

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


COVERED = """(panel) => {
  // Lines of the article's text the open panel lies on (a paragraph's box, clipped to the screen).
  const p = panel.getBoundingClientRect();
  return [...document.querySelectorAll('.prose p, .prose li')].filter((node) => {
    const r = node.getBoundingClientRect();
    if (r.bottom <= 0 || r.top >= innerHeight) return false;
    return r.right > p.left && r.left < p.right && r.bottom > p.top && r.top < p.bottom;
  }).length;
}"""


@pytest.mark.parametrize("width", [768, 900])
def test_on_a_tablet_the_open_panel_sits_beside_the_article_not_on_it(site, open_page, width):
    # From 521 to 960 px the panel floated over the right half of every line it reached.
    page = open_page({"width": width, "height": 1024})
    page.goto(site + "/articles/why-step-limits-matter/")
    open_chat(page)
    screenshot(page, f"article-beside-panel-{width}")
    panel = page.locator("#chat-panel")
    assert panel.evaluate(COVERED) == 0
    page.mouse.wheel(0, 1500)  # further down the article too
    page.wait_for_timeout(200)
    assert panel.evaluate(COVERED) == 0
    assert panel.get_attribute("aria-modal") == "false"  # the page stays within reach
    # "← All articles", the article's last line, and the newer and older articles above it.
    for link in page.locator(".article__footer a").all():
        link.scroll_into_view_if_needed()
        assert not _overlaps(link.bounding_box(), panel.bounding_box())
    # A column that still reads as one: at least a phone's.
    assert page.locator(".prose").bounding_box()["width"] >= 330


def test_beside_a_tablets_column_the_narrow_panel_shows_new_chat_as_its_icon(
    offline_site, open_page
):
    # The panel is 20rem there: "New chat" with its label squeezed the subtitle to three lines.
    page = open_page({"width": 768, "height": 1024})
    ChatRoute(page, lambda socket, frame: frame["type"] == "message" and socket.answer("Yes."))
    page.goto(offline_site + "/")
    open_chat(page)
    ask(page, "Hello?")
    new_chat = page.get_by_role("button", name="New chat")
    expect(new_chat).to_be_visible()
    # Measured as the panel still scaled in (0.98 to 1), the two read 35.99 and 35.89 px.
    page.locator("#chat-panel").evaluate(
        "(n) => Promise.all(n.getAnimations().map((a) => a.finished))"
    )
    close = page.get_by_role("button", name="Close the chat").bounding_box()
    assert new_chat.bounding_box()["width"] == pytest.approx(close["width"], abs=0.01)
    assert len(page.locator(".chat-panel__subtitle").evaluate(LINE_WIDTHS)) <= 2


def test_on_a_small_tablet_the_open_panel_is_the_full_screen_sheet(site, open_page):
    # At 600 px no readable column fits beside the panel: a phone's sheet, not a card on the text.
    page = open_page({"width": 600, "height": 900})
    page.goto(site + "/articles/why-step-limits-matter/")
    open_chat(page)
    panel = page.locator("#chat-panel")
    panel.evaluate("(n) => Promise.all(n.getAnimations().map((a) => a.finished))")  # it slides in
    assert panel.bounding_box() == {"x": 0, "y": 0, "width": 600, "height": 900}
    expect(panel).to_have_attribute("aria-modal", "true")
    assert page.locator("#content").evaluate("(n) => n.closest('[inert]') !== null")
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(page.locator("#content")).not_to_have_attribute("inert", "")


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


@pytest.mark.parametrize(
    ("zone", "locale", "expected"),
    [
        ("Pacific/Honolulu", "en-US", "30 June 2026"),  # 09:00 UTC is 11 p.m. the day before
        ("UTC", "en-US", "1 July 2026"),
        ("Asia/Shanghai", "zh-CN", "2026年7月1日"),
        ("Pacific/Honolulu", "zh-CN", "2026年6月30日"),
    ],
)
def test_publication_dates_are_the_readers_own_day(site, open_page, zone, locale, expected):
    # why-step-limits-matter was published at 09:00 UTC on 1 July 2026: the server wrote
    # "1 July 2026" for every reader, a day off in Honolulu.
    page = open_page(timezone_id=zone, locale=locale)
    page.goto(site + "/articles/why-step-limits-matter/")
    expect(page.locator(".article__header time")).to_have_text(expected)
    page.goto(site + "/tags/limits/")
    card = page.locator(".card", has=page.locator('a[href="/articles/why-step-limits-matter/"]'))
    expect(card.locator("time")).to_have_text(expected)
