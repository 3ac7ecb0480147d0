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
