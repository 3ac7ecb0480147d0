"""The seventh first-run walk (reader; desktop and phone): what it found, fixed and checked in
Chromium."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.model_server import text_response
from tests.e2e.conftest import CHROMIUM, PHONE, screenshot
from tests.e2e.test_chat_panel import ask, wait_answered

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

ARABIC_QUESTION = "ما هو فهرس HNSW؟"
ARABIC_COMMENT = "الجواب قصير جدا"
ARABIC_ANSWER = "فهرس HNSW هو رسم بياني متعدد الطبقات.\n\n- سريع في البحث\n- بطيء في البناء"

# The direction Chromium resolved for each element, as CSS's :dir() sees it.
DIRECTIONS = "(nodes) => nodes.map((n) => (n.matches(':dir(rtl)') ? 'rtl' : 'ltr'))"


def directions(page, selector: str) -> list[str]:
    return page.locator(selector).evaluate_all(DIRECTIONS)


def test_an_arabic_question_and_answer_read_right_to_left(site, scripted, open_page):
    # "ما هو فهرس HNSW؟" showed as "؟HNSW" at the right end of an LTR bubble, its question mark
    # on the wrong side; the answer's paragraphs and list items were laid out left to right too.
    scripted.enqueue(text_response([ARABIC_ANSWER]), text_response(["Yes, it is."]))
    page = open_page(PHONE)
    page.goto(site + "/")
    page.locator("#chat-launcher").click()
    box = page.locator("#chat-input")
    box.fill(ARABIC_QUESTION)
    assert directions(page, "#chat-input") == ["rtl"]  # typed right to left, too
    box.press("Enter")
    wait_answered(page)
    ask(page, "Is HNSW fast?")  # English beside it keeps left to right
    wait_answered(page)
    screenshot(page, "arabic-question-375")

    expected = {
        ".chat-question__text": ["rtl", "ltr"],
        ".chat-answer p": ["rtl", "ltr"],
        ".chat-answer li": ["rtl", "rtl"],
    }
    for selector, dirs in expected.items():
        assert directions(page, selector) == dirs, selector

    # A comment under the Arabic answer: typed and shown right to left inside "Your comment: “…”".
    page.get_by_role("button", name="Not helpful").first.click()
    comment = page.locator(".chat-feedback__comment").first
    comment.fill(ARABIC_COMMENT)
    assert directions(page, ".chat-feedback__comment >> nth=0") == ["rtl"]
    comment.press("Enter")
    note = page.locator(".chat-feedback__note").first
    expect(note).to_contain_text(f"Your comment: “{ARABIC_COMMENT}”")
    expected[".chat-feedback__note bdi"] = ["rtl"]
    assert directions(page, ".chat-feedback__note bdi") == ["rtl"]

    page.reload()  # the saved transcript is drawn the same way
    expect(page.locator(".chat-answer p")).to_have_count(2)
    for selector, dirs in expected.items():
        assert directions(page, selector) == dirs, selector


def test_the_network_going_away_under_an_open_chat_is_said(site, scripted, open_page):
    # An open socket hears nothing when the network goes: the panel said nothing either, and a
    # question asked then sat under its dots with no word of why.
    scripted.enqueue(text_response(["First."]), text_response(["Second."]))
    page = open_page(PHONE)
    page.goto(site + "/")
    page.locator("#chat-launcher").click()
    ask(page, "Is anyone there?")
    wait_answered(page)  # the socket is open
    status = page.locator("#chat-status")
    expect(status).to_be_hidden()

    page.context.set_offline(True)
    expect(status).to_have_text("You’re offline. Waiting for the network…")
    screenshot(page, "network-gone-375")
    page.context.set_offline(False)
    expect(status).to_be_hidden()  # the same socket carries on
    ask(page, "Still there?")
    expect(page.locator(".chat-answer").last).to_have_text("Second.")
