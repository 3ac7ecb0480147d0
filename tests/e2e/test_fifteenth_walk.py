"""The fifteenth first-run walk, as three people: an author writing their first article, a reader
on a phone, and an admin reviewing a busy week. What each tripped on first, fixed and checked
in Chromium."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.model_server import text_response
from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.test_answer_shapes import chunks
from tests.e2e.test_chat_panel import ask, open_chat, wait_answered

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

PHONES = {"375x667": {"width": 375, "height": 667}, "390x844": {"width": 390, "height": 844}}

LONG_ANSWER = (
    "Create the index with the SQL below.\n\n"
    "```sql\nCREATE INDEX chunk_embedding_hnsw ON blog_chunk USING hnsw "
    "(embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);\n```\n\n"
    "| setting | default | what it trades |\n|---|---|---|\n"
    "| m | 16 | memory for recall |\n| ef_construction | 64 | build time for recall |\n"
    "| ef_search | 40 | query time for recall |\n\n"
    "Source: [pgvector and HNSW indexes](/articles/pgvector-hnsw/)"
)

# Every button the panel shows, with its size: the sources are links in a list, not buttons.
BUTTON_SIZES = """() => [...document.querySelectorAll('#chat-panel button')]
  .filter((b) => b.getClientRects().length && getComputedStyle(b).visibility !== 'hidden')
  .map((b) => {
    const box = b.getBoundingClientRect();
    return {name: b.getAttribute('aria-label') || b.textContent.trim(),
            width: Math.round(box.width), height: Math.round(box.height)};
  })"""


@pytest.mark.parametrize("phone", PHONES)
def test_on_a_touch_screen_every_button_of_the_panel_takes_a_fingertip(
    site, scripted, open_page, phone
):
    # On a 375 px phone the thumbs were 30 x 27 px and 7 px apart, "Copy" 24 px tall, Close
    # and "New chat" 36 x 34 px: a thumb meant for "Helpful" could land on "Not helpful".
    scripted.enqueue(text_response(chunks(LONG_ANSWER, 60)))
    page = open_page(PHONES[phone], is_mobile=True, has_touch=True)
    page.goto(site + "/")
    open_chat(page)
    ask(page, "How do I create the HNSW index?")
    wait_answered(page)
    turn = page.locator(".chat-turn").last
    turn.get_by_role("button", name="Not helpful").tap()  # opens the comment box and its Send
    expect(turn.locator(".chat-feedback__comment")).to_be_visible()
    turn.locator(".chat-actions").scroll_into_view_if_needed()
    screenshot(page, f"fifteenth-touch-{phone}")

    buttons = page.evaluate(BUTTON_SIZES)
    names = {button["name"] for button in buttons}
    assert {"Helpful", "Not helpful", "Copy the answer", "Close the chat", "New chat"} <= names
    small = [b for b in buttons if b["width"] < 44 or b["height"] < 44]
    assert small == [], small
    # The code's own copy button sits above the code, not on its first line.
    code = turn.locator(".chat-code")
    copy = code.locator(".chat-copy").bounding_box()
    first_line = code.locator("code").bounding_box()
    assert copy["y"] + copy["height"] <= first_line["y"] + 1, (copy, first_line)
    # Neither the code nor the table pushes the page sideways.
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONES[phone]["width"]


def test_with_a_mouse_the_panel_keeps_its_compact_buttons(site, scripted, open_page):
    # The fingertip sizes are for touch screens only: a desktop's panel stays as it was.
    scripted.enqueue(text_response(["Short answer."]))
    page = open_page({"width": 1280, "height": 800})
    page.goto(site + "/")
    open_chat(page)
    ask(page, "Anything?")
    wait_answered(page)
    sizes = {b["name"]: b for b in page.evaluate(BUTTON_SIZES)}
    assert sizes["Helpful"]["height"] < 44 and sizes["Copy the answer"]["height"] < 44
