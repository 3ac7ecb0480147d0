"""The header's English/中文 switch in Chromium: the page and the chat panel change language."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import CHROMIUM, PHONE, screenshot
from tests.e2e.test_chat_panel import STEP_LIMITS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)


def test_switching_to_chinese_changes_the_panels_strings_and_back(site, open_page):
    page = open_page()
    page.goto(f"{site}/articles/{STEP_LIMITS}/")
    expect(page.locator("#chat-launcher")).to_have_text("Ask Docent")

    page.get_by_role("button", name="中文").click()
    expect(page.locator("header.site-header")).to_have_attribute("lang", "zh-Hans")
    assert page.url == f"{site}/articles/{STEP_LIMITS}/"  # the same page, in the other language
    expect(page.get_by_role("link", name="文章", exact=True)).to_be_visible()
    expect(page.locator("#chat-launcher")).to_have_text("问问 Docent")
    page.locator("#chat-launcher").click()
    expect(page.locator("#chat-input")).to_have_attribute("placeholder", "就这篇文章提问…")
    expect(page.locator(".chat-panel__subtitle")).to_have_text("回答只来自本博客的文章")
    screenshot(page, "language-zh")

    page.goto(site + "/")  # remembered on the next page
    expect(page.locator("#chat-input")).to_have_attribute("placeholder", "输入你的问题…")
    page.get_by_role("button", name="English").click()
    expect(page.locator("#chat-input")).to_have_attribute("placeholder", "Ask a question…")


def test_the_switch_works_without_javascript_on_a_phone(site, open_page):
    page = open_page(viewport=PHONE, java_script_enabled=False)
    page.goto(site + "/")
    current = page.locator(".lang-switch [aria-current=true]")
    expect(current).to_be_hidden()  # on a phone only the other language is offered
    header = page.locator(".site-header__inner")
    assert header.evaluate("n => n.scrollWidth <= n.clientWidth")  # one line, nothing spills

    page.get_by_role("button", name="中文").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-Hans")
    expect(page.get_by_role("button", name="English")).to_be_visible()
    screenshot(page, "language-phone-no-js")


# The last character of each line a node's text is laid out in.
LINE_ENDS = """(node) => {
  const text = node.firstChild, ends = [];
  let top = null;
  for (let i = 0; i < text.length; i++) {
    const range = document.createRange();
    range.setStart(text, i);
    range.setEnd(text, i + 1);
    const rect = range.getClientRects()[0];
    if (!rect || !rect.width) continue;
    if (top !== null && rect.top > top + 2) ends.push(text.data[i - 1]);
    top = rect.top;
  }
  return ends;
}"""


@pytest.mark.parametrize("viewport", [None, PHONE], ids=["desktop", "phone"])
def test_the_chinese_welcome_breaks_after_punctuation_not_inside_a_word(site, open_page, viewport):
    # At 1280 px it read "…博客没" / "有写到的内容…": a line break inside 没有.
    page = open_page(viewport=viewport, locale="zh-CN")
    page.goto(site + "/")
    page.locator("#chat-launcher").click()
    for selector in (".chat-empty__text", ".chat-empty__title"):
        node = page.locator(selector)
        expect(node).to_be_visible()
        assert set(node.evaluate(LINE_ENDS)) <= {"，", "。", "；", "："}, selector
    screenshot(page, f"welcome-zh-{'phone' if viewport else 'desktop'}")
