"""The eleventh first-run walk (panel and admin; phone and desktop, English and Chinese): what it
found, fixed and checked in Chromium."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.model_server import text_response
from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.test_answer_shapes import chunks
from tests.e2e.test_chat_panel import ask, wait_answered
from tests.e2e.test_rough_edges import open_chat

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}

# Lists a model writes indented: a sub-list after a blank line, a list under a paragraph.
INDENTED_LISTS = (
    "Two ways to search:\n\n1. By keywords\n\n   - exact terms\n   - names\n\n"
    "Then:\n  - merge the two\n\nTHE END"
)
# Lists in quotes in lists, hundreds of lines deep, each indented a little more.
DEEP_NESTING = "".join(
    "> " * min(level, 12) + " " * (level % 4) + f"- level {level}\n" for level in range(400)
)
DEEP_NESTING += "\nTHE END"


@pytest.mark.parametrize("answer", [INDENTED_LISTS, DEEP_NESTING], ids=["indented", "deep"])
def test_an_indented_or_deeply_nested_list_renders_with_the_rest_of_the_answer(
    site, scripted, open_page, answer
):
    # A list whose first item sat two or three spaces in ("  - a") took none of its lines, and
    # markdown.js asked for it again for ever: the tab froze mid-answer, and again on reload.
    scripted.enqueue(text_response(chunks(answer, 40)))
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "how do I search?")
    wait_answered(page)
    reply = page.locator(".chat-answer")
    expect(reply).to_contain_text("THE END")
    expect(reply.locator("li").first).to_be_visible()
    page.reload()
    expect(reply).to_contain_text("THE END")
    if answer == INDENTED_LISTS:
        expect(reply.locator("li")).to_have_text(["By keywords", "exact terms", "names",
                                                  "merge the two"])  # fmt: skip
        screenshot(page, "eleventh-indented-lists")


TIMEOUTS = "cancellation-and-timeouts-zh"  # a demo article whose table has code in a column
TIMEOUT_TABLE = (
    "| 对象 | 超时 | 超时后的处理 |\n| --- | --- | --- |\n"
    "| 文章搜索 | 10 秒（`AGENT_TOOL_TIMEOUT`） | 把“搜索超时”作为工具结果交给模型 |\n"
    "| 读取整篇文章 | 10 秒 | 同上 |\n"
    "| 单次模型调用 | 60 秒收不到新数据（`AGENT_MODEL_TIMEOUT`），或整段流超过 300 秒 "
    "| 尚未输出时最多重试两次，仍失败则结束本轮，状态记为 error |\n"
)
# Per table: its narrowest cell's text width in characters (em), the header cells on more than
# one line whose text is three characters or fewer, and the code broken across lines in cells.
TABLE_FIT = """(tables) => tables.map((table) => {
  const lines = (node) => {
    const range = document.createRange();
    range.selectNodeContents(node);
    return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
  };
  const cells = [...table.querySelectorAll('th, td')];
  const widths = cells.map((cell) => {
    const style = getComputedStyle(cell);
    const text = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return text / parseFloat(style.fontSize);
  });
  return {
    narrowest: Math.min(...widths),
    brokenHeaders: [...table.querySelectorAll('th')]
      .filter((th) => th.textContent.trim().length <= 3 && lines(th) > 1)
      .map((th) => th.textContent),
    brokenCode: [...table.querySelectorAll('td code')].filter((c) => lines(c) > 1)
      .map((c) => c.textContent),
  };
})"""


def test_a_chinese_table_on_a_phone_keeps_its_columns_readable(site, scripted, open_page):
    # Beside a column of code, the other columns fell to one character a line ("对/象",
    # "文/章/搜/索" down the page); in the panel, the code itself broke ("AGENT_TOOL_TIMEOU/T").
    scripted.enqueue(text_response(chunks(TIMEOUT_TABLE, 60)))
    page = open_page(PHONE, locale="zh-CN")
    page.goto(f"{site}/articles/{TIMEOUTS}/")
    table = page.locator("article table").first
    table.evaluate("(node) => { node.scrollIntoView(); scrollBy(0, -80); }")  # the sticky header
    article = page.locator("article table").evaluate_all(TABLE_FIT)[0]
    screenshot(page, "eleventh-table-article-zh")
    open_chat(page)
    ask(page, "超时怎么处理？")
    wait_answered(page)
    answer = page.locator(".chat-answer table").evaluate_all(TABLE_FIT)[0]
    screenshot(page, "eleventh-table-answer-zh")
    for fit in (article, answer):
        assert fit["narrowest"] >= 2.95, fit  # three characters at least
        assert fit["brokenHeaders"] == [], fit
    assert answer["brokenCode"] == [], answer
    # It still fits the phone: the article's table does not scroll sideways.
    assert table.evaluate("(node) => node.scrollWidth <= node.clientWidth")


@pytest.mark.parametrize(("locale", "other", "lang"), [("en-US", "中文", "zh-Hans"),
                                                       ("zh-CN", "English", "en")])  # fmt: skip
def test_on_a_phone_the_open_panel_switches_the_language(
    site, scripted, open_page, locale, other, lang
):
    # The sheet covers the header, its language switch with it: a reader had to close the chat
    # to find the switch. The sheet carries the other language; the panel reopens after it.
    scripted.enqueue(text_response(["Caps ", "keep ", "loops ", "cheap."]))
    page = open_page(PHONE, locale=locale)
    page.goto(f"{site}/articles/why-step-limits-matter/")
    open_chat(page)
    ask(page, "why cap steps?")
    wait_answered(page)
    switch = page.locator("#chat-panel .chat-lang button")
    expect(switch).to_be_visible()
    expect(switch).to_have_accessible_name(other)
    screenshot(page, f"eleventh-panel-language-{locale}")
    switch.click()
    expect(page.locator("#chat")).to_have_attribute("lang", lang)
    expect(page.locator("#chat-panel")).to_be_visible()
    expect(page.locator(".chat-answer")).to_have_text("Caps keep loops cheap.")
    screenshot(page, f"eleventh-panel-language-{locale}-switched")


def test_beside_the_page_the_panel_leaves_the_language_to_the_header(site, open_page):
    page = open_page(DESKTOP)
    page.goto(site + "/")
    open_chat(page)
    expect(page.locator("#chat-panel .chat-lang")).to_be_hidden()
    expect(page.locator(".site-header .lang-switch")).to_be_visible()
