"""How a turn ended reads the same after a reload (the panel's history) as it did live."""

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from agent.llm.offline_declines import NOT_MENTIONED
from testing_support.model_server import error_response, text_response, tool_call_response
from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.test_chat_panel import (
    LOOP,
    STEP_LIMITS,
    ask,
    conversation_id,
    open_chat,
    saved_turns,
    wait_answered,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)


def ending(page) -> tuple[str, list[tuple[str, str | None]]]:
    """The ending note's sentence and its links (text, href)."""
    note = page.locator(".chat-note").last
    links = note.get_by_role("link")
    pairs = [
        (links.nth(i).inner_text(), links.nth(i).get_attribute("href"))
        for i in range(links.count())
    ]
    return note.locator(".chat-note__text").inner_text(), pairs


def test_a_step_limit_ending_lists_the_same_articles_after_a_reload(
    site, scripted, open_page, articles
):
    # Live: "These articles looked relevant:" and the two read; after a reload it said
    # "Try a narrower question" with none, as the articles were never saved with the turn.
    first, second = articles[STEP_LIMITS], articles[LOOP]
    scripted.enqueue(
        tool_call_response(
            [
                ("call_a", "get_article_detail", json.dumps({"article_id": first["id"]})),
                ("call_b", "get_article_detail", json.dumps({"article_id": second["id"]})),
            ]
        ),
        tool_call_response([("call_c", "search_knowledge_base", '{"query": "more"}')]),
    )
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "Compare everything")
    expect(page.locator(".chat-note--warn").get_by_role("link")).to_have_count(2)
    live = ending(page)
    assert live[1] == [
        (first["title"], f"/articles/{STEP_LIMITS}/"),
        (second["title"], f"/articles/{LOOP}/"),
    ]
    assert saved_turns(conversation_id(page))[0].status == "max_steps"

    page.reload()
    expect(page.locator(".chat-turn")).to_have_count(1)
    expect(page.locator(".chat-note--warn").get_by_role("link")).to_have_count(2)
    assert ending(page) == live
    screenshot(page, "step-limit-articles-after-reload")
    page.watch.assert_quiet()


def test_a_model_failure_says_the_same_after_a_reload(site, scripted, open_page):
    scripted.enqueue(error_response(500))
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "Is anyone there?")
    expect(page.locator(".chat-note--warn")).to_be_visible()
    live = ending(page)
    saved_turns(conversation_id(page))

    page.reload()
    expect(page.locator(".chat-turn")).to_have_count(1)
    expect(page.locator(".chat-note--warn")).to_be_visible()
    assert ending(page) == live


def test_a_decline_links_the_nearest_article_without_a_sources_list(
    site, scripted, open_page, articles
):
    # The offline model's decline named the nearest article in plain text. Now a link, it is
    # still a decline: no Sources list, live or after a reload.
    read = json.dumps({"article_id": articles[LOOP]["id"]})
    link = f"[{articles[LOOP]['title']}](/articles/{LOOP}/)"
    scripted.enqueue(
        tool_call_response([("call_r", "get_article_detail", read)]),
        text_response([NOT_MENTIONED["en"].format(name="1006", link=link)]),
    )
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "What does close code 1006 mean?")
    wait_answered(page)
    answer = page.locator(".chat-answer")
    expect(answer.get_by_role("link")).to_have_attribute("href", f"/articles/{LOOP}/")
    expect(page.locator(".chat-sources")).to_be_hidden()
    screenshot(page, "decline-links-the-nearest-article")
    assert saved_turns(conversation_id(page))[0].answered is False

    page.reload()
    expect(page.locator(".chat-turn")).to_have_count(1)
    expect(answer.get_by_role("link")).to_have_attribute("href", f"/articles/{LOOP}/")
    expect(page.locator(".chat-sources")).to_be_hidden()
    page.watch.assert_quiet()
