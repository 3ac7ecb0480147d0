"""Inline Markdown in the panel takes time in proportion to the answer, on a slow phone too.

`static/chat/markdown.js` found code, bold, links and italics with one regular expression: an
opener with no closer searched the rest of the line from every position, so a 40 kB answer of
"__a " took 160 ms a render on a desktop's Chromium and 3.5 s on a slow phone, on every frame
while it streamed. The rules are now one left-to-right pass (`static/chat/inline.js`).
"""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.model_server import text_response
from tests.e2e.conftest import CHROMIUM
from tests.e2e.test_answer_shapes import chunks
from tests.e2e.test_chat_panel import ask, open_chat, wait_answered

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

# A low-end phone: Chromium runs the page's scripts this many times slower. The old rules took
# about 1-2.5 s a render of these answers so slowed, on every frame while they streamed; the new
# ones under 0.1 s. (At 40x the new rules' waits came near the 10 s limit on a loaded machine.)
SLOW_PHONE = 10
ADVERSARIAL = {
    "underscores": "__a " * 10_000,  # 40 kB: "__" openers, none closable
    "stars": "**a " * 8_000,  # 32 kB
    "backticks": "`a``" * 12_000,  # 48 kB: runs of one and three
    "ticks": "`" * 40_000,  # 40 kB: one run, each of its ends an opener
    "links": "[a](" * 10_000,  # 40 kB: labels whose url never ends
}

# Ordinary answers; the expected HTML is what the old rules made of them, attribute for attribute.
ORDINARY = "\n\n".join(
    [
        "Use `reindex --full` after **changing the model**, then *check* the "
        "[logs](/articles/logs/).",
        "A __bold__ word, snake__case__name, and ``code with ` tick``; see "
        '[docs](https://example.com/a_b "Docs") or <https://x.y>.',
        "**Nested *italic* inside** and *italic with **bold*** and [**bold link**](/a/) end.",
        "中文答案：使用 **向量检索** 和 *全文检索*，参见 [文章](/articles/zh/)。"
        "`AGENT_MAX_STEPS` 默认 5。",
        "| 对象 | 超时 |\n| --- | ---: |\n| 文章搜索 | 10 秒（`AGENT_TOOL_TIMEOUT`） |\n"
        "| **模型** | [见此](/a/) |",
        "## Steps\n\n1. Run `make run`\n2. Open *the* page\n\n> a **quoted** line\n\n"
        "- [x](javascript:alert(1)) stays text\n- 2 * 3 * 4 = 24",
    ]
)
ORDINARY_HTML = (Path(__file__).parent / "inline_markdown_expected.html").read_text().strip()


def slow_down(page, rate: int) -> None:
    page.context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": rate})


@pytest.mark.parametrize("answer", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_a_40_kb_adversarial_answer_renders_whole_and_the_next_one_too(
    site, scripted, open_page, answer
):
    scripted.enqueue(
        text_response(chunks(answer + " THE END", 2_000)), text_response(["Still ", "**here**."])
    )
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    slow_down(page, SLOW_PHONE)
    ask(page, "break the panel")
    wait_answered(page)
    answers = page.locator(".chat-answer")
    expect(answers.first).to_contain_text("THE END")
    ask(page, "and then?")
    wait_answered(page)
    expect(answers.nth(1)).to_have_text("Still here.")
    expect(answers.nth(1).locator("strong")).to_have_text("here")


def test_ordinary_markdown_renders_as_before(site, scripted, open_page):
    scripted.enqueue(text_response(chunks(ORDINARY, 40)))
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "show me everything")
    wait_answered(page)
    assert page.locator(".chat-answer").first.inner_html() == ORDINARY_HTML
