"""The panel's note when a day's budget cuts an answer, in a real Chromium against a real budget.

It said "This conversation has reached its length limit" and offered a new chat, which the
site's spent budget then refused too.
"""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.live_server import LiveServer
from testing_support.model_server import text_response
from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.test_chat_panel import (
    ask,
    conversation_id,
    open_chat,
    saved_turns,
    wait_answered,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)


@pytest.fixture
def low_budget_site(live_data, model_server, tmp_path):
    """The site with 3,000 tokens left for the day: less than a long answer needs."""
    env = {
        "OPENAI_BASE_URL": model_server.base_url,
        "OPENAI_API_KEY": "test",
        "AGENT_MODEL": "scripted",
        "AGENT_TOKENS_PER_DAY": "3000",
        "AGENT_TOKENS_RESERVE": "1000",
        "AGENT_TOKENS_PER_ANSWER": "200",
    }
    with LiveServer("low-budget", live_data, env, tmp_path / "spool") as server:
        yield server.url


def test_an_answer_the_sites_budget_cut_says_so_and_offers_no_new_chat(
    low_budget_site, scripted, open_page
):
    scripted.enqueue(text_response(["word "] * 2000))  # about 3,400 tokens of answer
    page = open_page()
    page.goto(low_budget_site + "/")
    open_chat(page)

    ask(page, "Write me a book")
    wait_answered(page)

    note = page.locator(".chat-note--warn")
    expect(note.locator(".chat-note__text")).to_contain_text(
        "The assistant has used today’s budget. Try again at"
    )
    expect(note).not_to_contain_text("length limit")
    expect(note.get_by_role("button", name="Ask in a new chat")).to_have_count(0)
    expect(page.locator(".chat-answer")).to_contain_text("word word")  # what it wrote stays
    expect(page.locator("#chat-input")).to_have_value("Write me a book")
    # Kept for later: "press Enter to send it again" would be refused until the day's end.
    expect(note.locator(".chat-note__hint")).to_have_text(
        "Your question is kept in the box for when you can ask again."
    )
    screenshot(page, "day-budget-cut")


def test_an_address_past_its_days_questions_is_told_so_and_keeps_its_question(
    live_data, tmp_path, open_page
):
    env = {"AGENT_MESSAGES_PER_DAY_PER_IP": "1"}  # the offline model: no token budget binds
    with LiveServer("day-messages", live_data, env, tmp_path / "spool") as server:
        page = open_page()
        page.goto(server.url + "/")
        open_chat(page)
        ask(page, "What is a step limit?")
        wait_answered(page)
        ask(page, "And why five?")
        note = page.locator(".chat-note--warn")
        expect(note.locator(".chat-note__text")).to_contain_text(
            "You have asked as many questions as one connection may in a day. Try again at"
        )
        expect(note).not_to_contain_text("faster than I can answer")
        expect(page.locator("#chat-input")).to_have_value("And why five?")
        screenshot(page, "day-messages")
        live = note.locator(".chat-note__text").inner_text()
        saved_turns(conversation_id(page))

        # The refusal at the door is never recorded: a reload showed the first answer alone,
        # and the reader, told nothing, asked again and was refused again.
        page.reload()
        expect(page.locator(".chat-turn")).to_have_count(2)
        expect(note.locator(".chat-note__text")).to_have_text(live)  # the same clock time
        expect(page.locator(".chat-turn").last.locator(".chat-question__text")).to_have_text(
            "And why five?"
        )
        expect(page.locator("#chat-input")).to_have_value("And why five?")

        # Sent again, its copy and note give way to the new refusal: one of each, not two.
        page.locator("#chat-input").press("Enter")
        expect(page.locator(".chat-turn")).to_have_count(2)
        expect(note).to_have_count(1)
