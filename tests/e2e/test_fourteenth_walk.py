"""The fourteenth first-run walk, as three people: a reader with a keyboard and a screen reader,
a reader on a bad connection, and an operator connecting a real model for the first time.
What each tripped on first, fixed and checked in Chromium."""

import asyncio
import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.model_server import error_response, text_response, tool_call_response
from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.sockets import ChatRoute
from tests.e2e.test_chat_panel import (
    ask,
    conversation_id,
    open_chat,
    saved_turns,
    wait_answered,
    words,
)
from tests.e2e.test_panel_fixes import UNAVAILABLE
from tests.e2e.test_rough_edges import reviewer, sign_in  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

STEP_LIMITS = "why-step-limits-matter"
# What a screen reader is given to say: every text a live region took on, in order.
HEARD = """() => {
  window.heard = [];
  const live = [...document.querySelectorAll(
    '#chat [aria-live]:not([aria-live=off]), #chat [role=status]')];
  for (const region of live) {
    new MutationObserver(() => {
      const text = region.textContent.trim();
      if (text && region.closest('[hidden]') === null) window.heard.push([region.id, text]);
    }).observe(region, {childList: true, subtree: true, characterData: true});
  }
}"""


def test_a_streamed_answer_is_said_once_when_it_is_done(site, scripted, open_page, articles):
    # The log was the live region (aria-relevant "additions text"): each frame re-rendered the
    # answer's paragraphs, and a screen reader read the answer in pieces as it grew.
    article = articles[STEP_LIMITS]
    answer = "Step limits cap the model calls of one turn, so a runaway loop stays cheap."
    source = f"\n\nSource: [{article['title']}](/articles/{STEP_LIMITS}/)"
    scripted.enqueue(
        tool_call_response(
            [("call_read", "get_article_detail", json.dumps({"article_id": article["id"]}))]
        ),
        text_response(words(answer + source), delay=0.03),
    )
    page = open_page()
    page.goto(f"{site}/articles/{STEP_LIMITS}/")
    open_chat(page)
    page.evaluate(HEARD)
    ask(page, "What do step limits do?")
    wait_answered(page)

    expect(page.locator(".chat-answer")).to_have_text(answer)
    heard = [text for _, text in page.evaluate("window.heard")]
    assert heard == ["Thinking…", f"{answer} Sources: {article['title']}."]
    # Nothing around the answer is live: not the log, not the turn.
    live = page.locator(".chat-answer").evaluate(
        "n => n.closest('[aria-live]').getAttribute('aria-live')"
    )
    assert live == "off"
    screenshot(page, "fourteenth-said-once")


def test_a_long_silence_says_the_assistant_is_still_working(site, scripted, open_page):
    # On slow 3G, or with a slow model, the panel showed its three dots and nothing else for as
    # long as the answer took: after a minute a reader could not tell waiting from a hang.
    # Held until the note has shown: a first word 2 s late could beat it on a loaded machine
    # (the note comes after the page's clock is moved on, which waits for the turn's start).
    held = asyncio.Event()
    scripted.enqueue(text_response(["A late answer."], gate=held))
    try:
        page = open_page()
        page.clock.install()
        page.goto(site + "/")
        open_chat(page)
        page.evaluate(HEARD)
        ask(page, "Anyone there?")
        slow = page.locator(".chat-turn .chat-slow")
        expect(page.locator(".chat-turn.is-streaming")).to_have_count(1)
        started = "() => localStorage.getItem('docent.chat.conversation')"  # set by `start`
        for _ in range(100):  # (wait_for_function evaluates a string: the page's CSP refuses it)
            if page.evaluate(started):
                break
            page.wait_for_timeout(100)
        expect(slow).to_be_hidden()
        page.clock.fast_forward("00:20")  # the model still holds its answer (held)
        expect(slow).to_be_visible()
        expect(slow).to_contain_text("You can keep waiting or press Stop")
        expect(page.get_by_role("button", name="Stop")).to_be_visible()
        screenshot(page, "fourteenth-still-waiting")
    finally:  # a failed test must not leave the model's stream held for the next ones
        scripted.loop.call_soon_threadsafe(held.set)
    wait_answered(page)
    expect(page.locator(".chat-answer")).to_have_text("A late answer.")
    expect(slow).to_be_hidden()
    heard = [text for _, text in page.evaluate("window.heard")]
    assert heard[1].startswith("Still waiting for the answer") and heard[-1] == "A late answer."


@pytest.mark.parametrize(
    ("status", "setting"), [(401, "OPENAI_API_KEY"), (404, "AGENT_MODEL")]
)  # fmt: skip
def test_a_wrong_key_or_model_name_is_no_retry_for_the_reader_and_named_for_the_operator(
    site,
    scripted,
    open_page,
    reviewer,  # noqa: F811
    status,
    setting,
):
    # The reader read "isn't responding right now… press Enter to send it again", and every
    # retry met the same refusal; the operator's dashboard said "Error 1", the transcript
    # "returned an error (HTTP 404)": no word of which setting was wrong.
    scripted.enqueue(error_response(status, message="scripted refusal"))
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "Is the model set up?")
    wait_answered(page)
    note = page.locator(".chat-turn .chat-note")
    # Since walk 21 the reader is not told the cause (the operator is): the assistant is out,
    # the blog is not, and its search takes the question.
    expect(note.locator(".chat-note__text")).to_have_text(
        "The assistant is unavailable at the moment. Everything else on the blog works as usual."
    )
    expect(page.locator("#chat-input")).to_have_value("")
    expect(note.get_by_role("link")).to_have_attribute("href", "/search/?q=Is+the+model+set+up%3F")
    screenshot(page, f"fourteenth-setup-{status}")
    saved_turns(conversation_id(page))  # the turn is completed in the background

    admin = open_page()
    sign_in(admin, site, reviewer)
    admin.goto(f"{site}/admin/agent/conversation/dashboard/")
    card = admin.get_by_test_id("model-trouble")
    expect(card).to_contain_text(setting)
    expect(card).to_contain_text("scripted")  # the model's name as configured
    card.get_by_role("link", name="the last failed turn").click()
    expect(admin.locator(".dc-turn").last).to_contain_text("Is the model set up?")
    admin.go_back()
    screenshot(admin, f"fourteenth-dashboard-{status}")


def test_ask_again_from_the_keyboard_keeps_the_focus_in_the_panel(site, open_page):
    # "Ask again" removed itself under the keyboard's focus: focus fell to <body>, and the next
    # Tab started from the top of the page, outside the panel, with the answer streaming.
    def on_frame(socket, frame):
        if frame["type"] != "message":
            return
        if socket.number == 1:
            socket.send(UNAVAILABLE)
        else:
            socket.answer("Answered by another worker.")

    page = open_page()
    route = ChatRoute(page, on_frame)
    page.goto(site + "/")
    open_chat(page)
    ask(page, "Are you there?")
    again = page.locator(".chat-note").get_by_role("button", name="Ask again")
    route.wait_for_sockets(2)
    page.locator("#chat-input").fill("")
    again.focus()
    page.keyboard.press("Enter")
    expect(page.locator(".chat-answer").last).to_have_text("Answered by another worker.")
    expect(page.locator("#chat-input")).to_be_focused()
    page.keyboard.press("Shift+Tab")  # back through the panel, not from the page's top
    assert page.evaluate("() => document.activeElement.closest('#chat-panel') !== null")


def test_every_module_of_the_panel_is_asked_for_with_the_page(site, open_page):
    # On slow 3G (2 s a round trip) the panel's modules came in four waves, each found only when
    # its importer had arrived (panel.js, turn.js, markdown.js, inline.js): the launcher showed
    # after 12.6-13.2 s. Preloaded with the page, 9.0-9.1 s (the walk's figures, README).
    page = open_page()
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{site}/articles/{STEP_LIMITS}/")
    expect(page.locator("#chat-launcher")).to_be_visible()
    modules = {url.removeprefix(site) for url in requested if "/static/chat/" in url}
    preloaded = page.locator("link[rel=modulepreload]").evaluate_all(
        "links => links.map((link) => link.getAttribute('href'))"
    )
    assert len(preloaded) == len(set(preloaded))
    assert set(preloaded) | {"/static/chat/panel.js"} == modules


def test_at_200_percent_zoom_the_welcome_opens_at_its_title(offline_site, open_page):
    # 1280 by 800 at 200% is 640 by 400 CSS px: the panel opened scrolled to the welcome's end,
    # on its suggestions, with "Ask me about anything on this blog." cut off above (under the
    # Quote mode line, the welcome is taller than the log).
    page = open_page({"width": 640, "height": 400})  # device scale 2 with a viewport
    page.goto(f"{offline_site}/articles/{STEP_LIMITS}/")
    page.keyboard.press("Control+k")
    expect(page.locator("#chat-input")).to_be_focused()
    # Read in one frame, the sheet slid in: read apart while it still moved (12 px and a 0.98
    # scale to none), the log's top and the title's were taken at two places of the slide.
    page.locator("#chat-panel").evaluate(
        "(n) => Promise.all(n.getAnimations().map((a) => a.finished))"
    )
    log, title = page.evaluate(
        """() => ["#chat-log", ".chat-empty__title"].map(
            (s) => document.querySelector(s).getBoundingClientRect().top)"""
    )
    assert title >= log, (title, log)
    assert page.locator("#chat-log").evaluate("n => n.scrollHeight > n.clientHeight")  # it scrolls
    screenshot(page, "fourteenth-zoom-200")
