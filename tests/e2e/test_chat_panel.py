"""The chat panel in a real Chromium, against daphne and a scripted OpenAI-compatible server."""

import json
import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from agent.models import Turn
from testing_support.model_server import error_response, text_response, tool_call_response
from tests.e2e.conftest import CHROMIUM, PHONE, screenshot
from tests.e2e.sockets import ChatRoute

# django_db: the tests read what the server saved (committed, so visible in their transaction).
pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

STEP_LIMITS = "why-step-limits-matter"
LOOP = "anatomy-of-the-agent-loop"
RECORDER = """() => {
  // Every label a tool chip ever showed, and every length the answer grew through.
  window.chipLabels = []; window.answerLengths = [];
  const log = document.getElementById('chat-log');
  new MutationObserver(() => {
    log.querySelectorAll('.chat-step__label').forEach((n) => {
      if (!window.chipLabels.includes(n.textContent)) window.chipLabels.push(n.textContent);
    });
    const answer = log.querySelector('.chat-turn:last-of-type .chat-answer');
    const length = answer ? answer.textContent.length : 0;
    if (length && window.answerLengths.at(-1) !== length) window.answerLengths.push(length);
  }).observe(log, {childList: true, subtree: true, characterData: true});
}"""


def saved_turns(conversation_id: str, count: int = 1, timeout: float = 10) -> list[Turn]:
    """A conversation's finished turns, polled: a turn's row exists from its start (running)
    and the server completes it in the background."""
    deadline = time.monotonic() + timeout
    while True:
        finished = Turn.objects.filter(conversation_id=conversation_id).exclude(status="running")
        turns = list(finished.order_by("index"))
        if len(turns) >= count or time.monotonic() > deadline:
            return turns
        time.sleep(0.1)


def open_chat(page):
    page.get_by_role("button", name="Ask Docent").click()
    expect(page.locator("#chat-panel")).to_be_visible()
    expect(page.locator("#chat-input")).to_be_focused()


def ask(page, question: str) -> None:
    box = page.locator("#chat-input")
    box.fill(question)
    box.press("Enter")


def wait_answered(page) -> None:
    expect(page.locator(".chat-turn.is-streaming")).to_have_count(0)
    expect(page.locator("#chat-send")).to_be_visible()


def conversation_id(page) -> str:
    return page.evaluate("localStorage.getItem('docent.chat.conversation')")


def words(text: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", text)


def test_ask_on_an_article_shows_steps_streams_and_cites(site, scripted, open_page, articles):
    article = articles[STEP_LIMITS]
    answer = (
        "Step limits **cap** the model calls of one turn.\n\n"
        "- an honest message when the cap is hit\n- a `final_answer` fallback\n\n"
        f"Source: [{article['title']}](/articles/{STEP_LIMITS}/)"
    )
    scripted.enqueue(
        tool_call_response(
            [
                ("call_search", "search_knowledge_base", '{"query": "hard step limit"}'),
                ("call_read", "get_article_detail", json.dumps({"article_id": article["id"]})),
            ],
            delay=0.05,
        ),
        text_response(words(answer), delay=0.05),
    )
    page = open_page()
    page.goto(f"{site}/articles/{STEP_LIMITS}/")
    open_chat(page)
    page.evaluate(RECORDER)

    box = page.locator("#chat-input")
    box.fill("Summarize this")
    box.press("Shift+Enter")
    box.press_sequentially("please")
    assert box.input_value() == "Summarize this\nplease"  # Shift+Enter is a new line, not a send
    assert scripted.requests == []
    box.press("Enter")

    expect(page.locator(".chat-question__text")).to_have_text("Summarize this\nplease")
    expect(box).to_have_value("")
    steps = page.locator(".chat-step")
    expect(steps).to_have_count(2)
    expect(steps.nth(0)).to_contain_text("Searched for “hard step limit”")
    expect(steps.nth(0).locator(".chat-step__meta")).to_have_text(
        re.compile(r"^(\d+ results?|no results) · [\d.]+ m?s$")
    )
    expect(steps.nth(1).locator(".chat-step__label")).to_have_text(f"Read “{article['title']}”")
    expect(page.locator("#chat-stop")).to_be_visible()
    wait_answered(page)

    source = page.locator(".chat-sources a")
    expect(source).to_have_count(1)
    expect(source).to_have_text(article["title"])
    # The link goes to the section the passage came from; the inline "Source:" line is gone.
    expect(source).to_have_attribute("href", re.compile(rf"^/articles/{STEP_LIMITS}/#sec-[\w-]+$"))
    reply = page.locator(".chat-answer")
    expect(reply).not_to_contain_text("Source:")
    expect(reply.locator("strong")).to_have_text("cap")
    expect(reply.locator("li")).to_have_count(2)
    expect(reply.locator("code")).to_have_text("final_answer")

    labels = page.evaluate("window.chipLabels")
    assert "Searching the blog for “hard step limit”…" in labels
    assert "Reading the article…" in labels
    lengths = page.evaluate("window.answerLengths")
    # It streamed, growing; the last render leaves out the "Source:" line the box repeats.
    streamed = lengths[:-1]
    assert len(streamed) >= 5 and streamed == sorted(streamed), lengths
    # The assistant knew which article the visitor was reading.
    system = " ".join(
        m["content"] for m in scripted.requests[0]["messages"] if m["role"] == "system"
    )
    assert f"The visitor is reading article #{article['id']}" in system
    expect(page.locator("#chat-offline-badge")).to_be_hidden()
    screenshot(page, "desktop")
    page.watch.assert_quiet()


def test_reload_and_navigation_restore_the_conversation(site, scripted, open_page, articles):
    scripted.enqueue(
        tool_call_response(
            [("call_1", "get_article_detail", json.dumps({"article_id": articles[LOOP]["id"]}))]
        ),
        text_response(["The loop ", "calls the model ", f"([the loop](/articles/{LOOP}/))."]),
    )
    page = open_page()
    page.goto(f"{site}/articles/{LOOP}/")
    open_chat(page)
    ask(page, "How does the loop work?")
    wait_answered(page)
    conversation = conversation_id(page)
    assert saved_turns(conversation)[0].status == "done"

    page.reload()
    panel = page.locator("#chat-panel")
    expect(panel).to_be_visible()  # it was open: it stays open
    expect(panel.locator(".chat-question__text")).to_have_text("How does the loop work?")
    expect(panel.locator(".chat-step__label")).to_have_text(f"Read “{articles[LOOP]['title']}”")
    expect(panel.locator(".chat-answer")).to_contain_text("The loop calls the model")
    expect(panel.locator(".chat-sources a")).to_have_attribute("href", f"/articles/{LOOP}/")

    page.goto(f"{site}/articles/{STEP_LIMITS}/")
    expect(panel.locator(".chat-question__text")).to_have_text("How does the loop work?")
    scripted.enqueue(text_response(["It ", "continues."]))
    ask(page, "And then?")
    wait_answered(page)
    expect(panel.locator(".chat-turn")).to_have_count(2)
    assert conversation_id(page) == conversation
    history = scripted.requests[-1]["messages"]
    assert {"role": "user", "content": "How does the loop work?"} in history
    assert [t.index for t in saved_turns(conversation, count=2)] == [1, 2]

    page.get_by_role("button", name="New chat").click()
    expect(panel.locator(".chat-turn")).to_have_count(0)
    expect(page.locator("#chat-input")).to_be_focused()
    assert conversation_id(page) is None


def test_stop_ends_the_stream_and_the_turn_is_saved_cancelled(site, scripted, open_page):
    scripted.enqueue(text_response([f"word{i} " for i in range(300)], delay=0.1))
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "Tell me everything")
    answer = page.locator(".chat-answer")
    expect(answer).to_contain_text("word3")
    page.get_by_role("button", name="Stop").click()

    expect(page.locator(".chat-note--muted")).to_have_text("Stopped.")
    expect(page.locator("#chat-stop")).to_be_hidden()
    expect(page.locator("#chat-send")).to_be_visible()
    expect(page.locator("#chat-input")).to_be_focused()  # not lost with the vanished button
    stopped_at = answer.text_content()
    page.wait_for_timeout(800)
    assert answer.text_content() == stopped_at  # nothing more streams in
    assert "word299" not in stopped_at
    assert scripted.disconnected.wait(5)  # the model stream was closed too

    turn = saved_turns(conversation_id(page))[0]
    assert turn.status == "cancelled"
    assert turn.answer.startswith("word0 word1 word2 word3")


def test_markup_in_an_answer_is_text_and_runs_nothing(site, scripted, open_page):
    hostile = (
        "Look: <img src=x onerror=alert(1)> and <script>alert(2)</script>\n\n"
        "**bold <img src=y onerror=alert(4)>** [click](javascript:alert(3)) "
        "[elsewhere](https://example.com/page) [here](/articles/why-step-limits-matter/)\n\n"
        "```\n<script>alert(5)</script>\n```"
    )
    scripted.enqueue(text_response(words(hostile)))
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "<b>not bold</b> <img src=z onerror=alert(6)>")
    wait_answered(page)

    answer = page.locator(".chat-answer")
    expect(answer).to_contain_text(
        "Look: <img src=x onerror=alert(1)> and <script>alert(2)</script>"
    )
    expect(answer.locator("strong")).to_have_text("bold <img src=y onerror=alert(4)>")
    expect(answer.locator("pre code")).to_have_text("<script>alert(5)</script>")
    expect(page.locator(".chat-question__text")).to_have_text(
        "<b>not bold</b> <img src=z onerror=alert(6)>"
    )
    page.wait_for_timeout(300)  # give a smuggled handler every chance to fire
    assert page.locator("#chat img, #chat script, #chat b, #chat iframe").count() == 0
    assert answer.locator("a[href^='javascript']").count() == 0
    expect(answer.locator(".chat-md-unlinked")).to_have_text("click")
    external = answer.get_by_role("link", name="elsewhere")
    expect(external).to_have_attribute("rel", "nofollow noopener noreferrer")
    expect(external).to_have_attribute("target", "_blank")
    local = answer.get_by_role("link", name="here", exact=True)
    expect(local).to_have_attribute("href", "/articles/why-step-limits-matter/")
    assert local.get_attribute("target") is None
    page.watch.assert_quiet()


def test_max_steps_shows_the_articles_found(site, scripted, open_page, articles):
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

    note = page.locator(".chat-note--warn")
    expect(note).to_contain_text("I reached my limit of steps before finishing the answer.")
    links = note.get_by_role("link")
    expect(links).to_have_count(2)
    expect(links.nth(0)).to_have_attribute("href", f"/articles/{STEP_LIMITS}/")
    expect(links.nth(0)).to_have_text(first["title"])
    expect(links.nth(1)).to_have_attribute("href", f"/articles/{LOOP}/")
    expect(page.locator("#chat-input")).to_have_value("")  # the turn ran: nothing to resend
    assert saved_turns(conversation_id(page))[0].status == "max_steps"


def test_a_model_failure_is_explained_and_keeps_the_question(site, scripted, open_page):
    scripted.enqueue(error_response(500))
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "Is anyone there?")
    note = page.locator(".chat-note--warn")
    expect(note).to_contain_text(
        "The language model behind the assistant isn’t responding right now."
    )
    expect(note).to_contain_text("Your question is back in the box")
    expect(page.locator("#chat-input")).to_have_value("Is anyone there?")

    scripted.enqueue(text_response(["Yes."]))
    page.locator("#chat-input").press("Enter")
    wait_answered(page)
    expect(page.locator(".chat-answer").last).to_have_text("Yes.")


GONE = "11111111-1111-4111-8111-111111111111"


def test_every_error_code_has_a_kind_message_and_the_socket_reconnects(site, open_page):
    """The server side is replaced by a scripted socket, so each ending can be forced."""
    endings = [
        ({"code": "rate_limited", "retry_after": 30}, r"Try again in (30|29|28) seconds\.", True),
        ({"code": "rate_limited", "retry_after": 0}, r"Start a new chat", True),
        ({"code": "busy"}, r"still running, perhaps in another tab", True),
        ({"code": "bad_request"}, r"couldn’t take that message", True),
        ({"code": "internal"}, r"Something went wrong on our side", True),
        ({"code": "max_steps"}, r"Try a narrower question", False),
        ({"code": "cancelled"}, r"^Stopped\.$", False),
    ]
    pending = list(endings)

    def on_frame(socket, frame):
        if frame["type"] != "message":
            return
        if frame["content"] == "drop":
            socket.close()
            return
        if len(route.frames) == 1:  # a conversation this session does not own (the API: 404)
            socket.start(conversation_id=GONE)
        socket.error(**pending.pop(0)[0])

    page = open_page()
    route = ChatRoute(page, on_frame)
    page.goto(site + "/")
    open_chat(page)
    box = page.locator("#chat-input")
    for number, (ending, message, kept) in enumerate(endings, start=1):
        question = f"question {number}"
        ask(page, question)
        note = page.locator(".chat-turn").last.locator(".chat-note")
        expect(note.locator(".chat-note__text")).to_have_text(re.compile(message))
        expect(box).to_have_value(question if kept else "")
        box.fill("")
        if ending["code"] == "bad_request":  # the conversation is checked, found gone, forgotten
            page.wait_for_function("() => !localStorage.getItem('docent.chat.conversation')")
    conversations = [f.get("conversation_id") for f in route.frames]
    assert conversations == [None, GONE, GONE, GONE, None, None, None]

    screenshot(page, "errors")
    ask(page, "drop")
    expect(page.locator(".chat-turn").last).to_contain_text("The connection dropped")
    expect(box).to_have_value("drop")
    expect(page.locator("#chat-status")).to_have_text("Connection lost. Reconnecting…")
    expect(page.locator("#chat-status")).to_be_hidden()  # reconnected
    assert len(route.sockets) == 2


def test_keyboard_opens_closes_and_moves_focus(site, open_page):
    page = open_page()
    page.goto(site + "/")
    launcher = page.get_by_role("button", name="Ask Docent")
    expect(launcher).to_have_attribute("aria-expanded", "false")
    screenshot(page, "closed")
    launcher.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#chat-panel")).to_be_visible()
    expect(page.locator("#chat-input")).to_be_focused()
    # The log is read on demand; each answer is said once when it ends (#chat-announce).
    expect(page.locator("#chat-log")).to_have_attribute("aria-live", "off")
    expect(page.locator("#chat-announce")).to_have_attribute("role", "status")
    expect(page.get_by_role("button", name="What’s new on the blog?")).to_be_visible()
    screenshot(page, "empty")
    page.keyboard.press("Escape")
    expect(page.locator("#chat-panel")).to_be_hidden()
    expect(launcher).to_be_focused()
    expect(launcher).to_have_attribute("aria-expanded", "false")


PHONE_ANSWER = (
    "Cap both: a **per-minute message limit** per session and per IP, and a token budget per "
    "conversation and per day.\n\n1. Count tokens after each turn\n2. Refuse politely with "
    "`retry_after`\n\n"
    "See [Rate limits and token budgets](/articles/rate-limits-and-token-budgets/)."
)
TRANSITIONS_DONE = """() => document.getAnimations()
  .every((a) => !(a instanceof CSSTransition) || a.playState !== 'running')"""


def test_phone_width_is_a_full_screen_sheet(site, scripted, open_page, articles):
    scripted.enqueue(
        tool_call_response(
            [("call_1", "search_knowledge_base", '{"query": "token budgets for public chatbots"}')]
        ),
        text_response(words(PHONE_ANSWER)),
    )
    page = open_page(viewport=PHONE)
    page.goto(f"{site}/articles/rate-limits-and-token-budgets/")
    open_chat(page)
    page.wait_for_function(TRANSITIONS_DONE)
    box = {key: round(value) for key, value in page.locator("#chat-panel").bounding_box().items()}
    assert box == {"x": 0, "y": 0, "width": PHONE["width"], "height": PHONE["height"]}
    ask(page, "How do I keep a public chatbot affordable?")
    wait_answered(page)
    expect(page.locator(".chat-sources a")).to_have_count(1)
    overflow = page.evaluate(
        "[...document.querySelectorAll('#chat-panel, #chat-log, .chat-turn')]"
        ".filter(n => n.scrollWidth > n.clientWidth + 1).map(n => n.className || n.id)"
    )
    assert overflow == []
    screenshot(page, "phone")
    page.locator("#chat-input").press("Escape")
    expect(page.get_by_role("button", name="Ask Docent")).to_be_focused()


def test_chinese_visitors_get_a_chinese_panel(site, scripted, open_page, articles):
    article = articles["embeddings-primer-zh"]
    scripted.enqueue(
        tool_call_response(
            [("call_1", "search_knowledge_base", '{"query": "文本嵌入 余弦相似度"}')]
        ),
        text_response(
            words(
                "文本嵌入把一段文字变成 384 个数字，意思相近的文字在向量空间里也彼此靠近。\n\n"
                "- 查询要加 `query:` 前缀\n- 段落要加 `passage:` 前缀\n\n"
                f"来源：[{article['title']}](/articles/embeddings-primer-zh/)"
            )
        ),
    )
    page = open_page(viewport=PHONE, locale="zh-CN")
    page.goto(f"{site}/articles/embeddings-primer-zh/")
    assert page.evaluate("document.documentElement.lang") == "zh-Hans"
    page.locator("#chat-launcher").click()
    expect(page.locator("#chat-input")).to_be_focused()
    expect(page.locator("#chat-input")).to_have_attribute("placeholder", "就这篇文章提问…")
    ask(page, "什么是文本嵌入？")
    wait_answered(page)
    expect(page.locator(".chat-step__label")).to_have_text("已搜索“文本嵌入 余弦相似度”")
    expect(page.locator(".chat-sources__title")).to_have_text("来源")
    expect(page.locator(".chat-sources a")).to_have_text(article["title"])
    screenshot(page, "zh-phone")


def test_offline_a_question_leaning_on_the_article_on_screen_is_answered_from_it(
    offline_site, open_page, articles
):
    """Asked alone, "where does the 60 come from?" says too little for the search's bar;
    asked on the RRF article, the assistant reads that article and quotes it."""
    slug = "hybrid-search-with-rrf"
    page = open_page()
    page.goto(f"{offline_site}/articles/{slug}/")
    open_chat(page)

    ask(page, "where does the 60 come from?")
    wait_answered(page)

    turn = page.locator(".chat-turn").last
    labels = turn.locator(".chat-step__label")
    expect(labels.first).to_contain_text("Searched for “where does the 60 come from?”")
    expect(labels.last).to_have_text(f"Read “{articles[slug]['title']}”")
    expect(turn.locator(".chat-answer")).to_contain_text("k = 60")
    expect(turn.locator(".chat-sources a")).to_have_attribute(
        "href", re.compile(rf"^/articles/{slug}/")
    )


def test_offline_mode_answers_from_the_demo_articles(offline_site, open_page, articles):
    article = articles[STEP_LIMITS]
    page = open_page()
    page.goto(f"{offline_site}/articles/{STEP_LIMITS}/")
    open_chat(page)
    expect(page.locator("#chat-offline-badge")).to_have_text(
        "Quote mode: answers are quoted from the articles"
    )
    page.get_by_role("button", name="Summarize this article").click()
    wait_answered(page)
    turn = page.locator(".chat-turn").last
    expect(turn.locator(".chat-step__label")).to_have_text(f"Read “{article['title']}”")
    expect(turn.locator(".chat-answer")).to_contain_text("step")
    expect(turn.locator(".chat-sources a")).to_have_attribute(
        "href", re.compile(rf"^/articles/{STEP_LIMITS}/")
    )

    ask(page, "How does reciprocal rank fusion combine vector and full-text search?")
    wait_answered(page)
    turn = page.locator(".chat-turn").last
    steps = turn.locator(".chat-step")
    expect(steps.first).to_contain_text("Searched for “How does reciprocal rank fusion")
    expect(steps.first.locator(".chat-step__meta")).to_have_text(re.compile(r"^\d+ results? · "))
    # The RRF article first; "vector and full-text" is two things, and the Chinese full-text
    # article's "两路结果用倒数排名融合（RRF）合并" may follow it.
    expect(turn.locator(".chat-sources a").first).to_have_attribute(
        "href", re.compile(r"^/articles/hybrid-search-with-rrf/(#sec-[\w-]+)?$")
    )
    expect(page.locator("#chat-offline-badge")).to_be_visible()
    screenshot(page, "offline")
    turns = saved_turns(conversation_id(page), count=2)
    assert [t.offline for t in turns] == [True, True]
