"""Walk 23 in a real Chromium: what a new reader meets in the panel's first minutes."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import CHROMIUM, DESKTOP, PHONE, screenshot
from tests.e2e.test_chat_panel import ask, open_chat, wait_answered

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

OFFERS = {
    "how do I bake sourdough bread?": "Articles you could ask about instead:",
    "红烧肉怎么做？": "可以改问这几篇文章：",
}


@pytest.mark.parametrize("question", OFFERS)
def test_a_decline_offers_articles_to_ask_about_in_the_questions_language(
    offline_site, open_page, question
):
    # "I couldn't find anything about that in this blog's articles." and nothing else: the
    # reader had nothing to try next.
    page = open_page(viewport=DESKTOP)
    page.goto(offline_site + "/")
    open_chat(page)
    ask(page, question)
    wait_answered(page)

    answer = page.locator(".chat-turn").last.locator(".chat-answer")
    expect(answer).to_contain_text(OFFERS[question])
    offered = answer.locator("a[href^='/articles/']")
    expect(offered).to_have_count(3)
    # Offered, not sources: no Sources list, and the turn is no answer.
    expect(page.locator(".chat-turn").last.locator(".chat-sources")).to_be_hidden()
    screenshot(page, f"walk23-decline-offers-{'zh' if '红' in question else 'en'}")
    offered.first.click()
    expect(page).to_have_url(re.compile(r"/articles/[\w-]+/$"))


def test_hi_lists_the_newest_articles_under_no_sources(offline_site, open_page):
    page = open_page(viewport=PHONE)
    page.goto(offline_site + "/")
    open_chat(page)
    ask(page, "hi")
    wait_answered(page)

    turn = page.locator(".chat-turn").last
    expect(turn.locator(".chat-answer a[href^='/articles/']").first).to_be_visible()
    expect(turn.locator(".chat-sources")).to_be_hidden()
    screenshot(page, "walk23-hi-phone")


def test_a_reader_deletes_their_conversation_from_the_panel(offline_site, open_page):
    # Nothing in the panel deleted a conversation: "New chat" left it one click ("Bring back
    # the last conversation") from the next person at a shared computer.
    page = open_page(viewport=PHONE)
    page.goto(offline_site + "/")
    open_chat(page)
    ask(page, "why cap the agent's steps?")
    wait_answered(page)
    conversation = page.evaluate("localStorage.getItem('docent.chat.conversation')")

    page.locator("#chat-new").click()
    expect(page.get_by_role("button", name="Bring back the last conversation")).to_be_visible()
    screenshot(page, "walk23-new-chat-offers-delete-phone")
    page.get_by_role("button", name="Delete it").click()

    deleted = page.locator(".chat-undo")
    expect(deleted).to_have_text(
        "Conversation deleted. The blog’s editors still see it, as they see every conversation."
    )
    expect(page.get_by_role("button", name="Bring back the last conversation")).to_have_count(0)
    screenshot(page, "walk23-deleted-phone")
    status = page.evaluate(
        "async (id) => (await fetch(`/api/conversations/${id}`)).status", conversation
    )
    assert status == 404  # gone for this reader's session
    ask(page, "what is reciprocal rank fusion?")
    expect(page.locator(".chat-undo")).to_have_count(0)  # the new conversation has begun
    wait_answered(page)
    page.reload()
    if not page.locator("#chat-panel").is_visible():
        open_chat(page)
    expect(page.locator(".chat-turn")).to_have_count(1)  # the new one only
    expect(page.locator(".chat-turn")).to_contain_text("reciprocal rank fusion")


def test_a_delete_that_fails_twice_says_so_once(offline_site, open_page):
    # Each failed click added "It couldn't be deleted. Try again." to the note once more.
    page = open_page(viewport=DESKTOP)
    page.goto(offline_site + "/")
    open_chat(page)
    ask(page, "why cap the agent's steps?")
    wait_answered(page)
    page.locator("#chat-new").click()

    def refuse(route) -> None:
        if route.request.method == "DELETE":
            route.fulfill(status=503, json={"detail": "Down for a moment."})
        else:
            route.continue_()

    conversations = re.compile(r"/api/conversations/[\w-]+$")
    page.route(conversations, refuse)
    delete = page.get_by_role("button", name="Delete it")
    note, announced = page.locator(".chat-undo"), page.locator("#chat-announce")
    failed = "It couldn’t be deleted. Try again."
    for _ in range(2):
        # Said to screen readers in the same step as in the note: once it is, the note is too.
        page.evaluate("document.getElementById('chat-announce').textContent = ''")
        delete.click()
        expect(announced).to_have_text(failed)
    page.unroute(conversations, refuse)

    assert note.inner_text().count(failed) == 1
    delete.click()
    expect(note).to_have_text(re.compile(r"^Conversation deleted\."))
