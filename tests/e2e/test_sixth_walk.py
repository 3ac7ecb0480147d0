"""The sixth first-run walk (reader and reviewer; desktop and phone; English and Chinese): what
it found, fixed and checked in Chromium."""

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.model_server import text_response, tool_call_response
from tests.e2e.conftest import CHROMIUM, PHONE, screenshot
from tests.e2e.sockets import ChatRoute
from tests.e2e.test_chat_panel import ask, wait_answered

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

BAD_CALLS = [
    ("c1", "list_articles", json.dumps({"limit": "many"})),
    ("c2", "search_knowledge_base", json.dumps({"query": "step limits", "limit": 99})),
    ("c3", "get_article_detail", json.dumps({"article_id": 999_999})),
    ("c4", "list_articles", json.dumps({"tag": "agents", "limit": "all"})),
]
FAILED_CHIPS = {
    "en-US": [
        "Couldn’t list the newest articles",
        "Couldn’t search for “step limits”",
        "Couldn’t read the article",
        "Couldn’t list articles tagged “agents”",
    ],
    "zh-CN": [
        "未能列出最新文章",
        "未能搜索“step limits”",
        "未能阅读文章",
        "未能列出标签为“agents”的文章",
    ],
}
FAILED_REASONS = {
    "en-US": ["invalid arguments", "invalid arguments", "not found", "invalid arguments"],
    "zh-CN": ["参数无效", "参数无效", "未找到", "参数无效"],
}


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_a_failed_tool_call_reads_as_a_failure_not_as_done(site, scripted, open_page, locale):
    # "Listed the newest articles · invalid arguments": the chip said the tool did its work.
    scripted.enqueue(tool_call_response(BAD_CALLS), text_response(["Nothing to show."]))
    page = open_page(PHONE, locale=locale)
    page.goto(site + "/")
    page.locator("#chat-launcher").click()
    ask(page, "What is new?")
    wait_answered(page)
    labels = page.locator(".chat-step__label")
    expect(labels).to_have_text(FAILED_CHIPS[locale])
    expect(page.locator(".chat-step.is-failed")).to_have_count(4)
    screenshot(page, f"failed-steps-{locale}")
    # "invalid arguments", "not found · 18 ms": the reason, then the time of a call that ran; a
    # call refused for its arguments never ran ("invalid arguments · 0 ms" timed nothing).
    metas = page.locator(".chat-step__meta").all_inner_texts()
    reasons = [meta.split(" · ")[0] for meta in metas]
    assert [" · " in meta for meta in metas] == [False, False, True, False], metas

    page.reload()  # restored from the saved turn, the same words
    expect(labels).to_have_text(FAILED_CHIPS[locale])
    # The reasons too: each had become "failed" (失败). A time may round another way (178/177 ms).
    same = [
        re.compile("^" + re.escape(r) + (" · " if " · " in m else "$"))
        for r, m in zip(reasons, metas, strict=True)
    ]
    expect(page.locator(".chat-step__meta")).to_have_text(same)
    assert reasons == FAILED_REASONS[locale]


def test_busy_in_another_tab_does_not_point_to_a_stop_button_this_tab_lacks(
    site, scripted, open_page
):
    # A second tab of the same chat read "I’m still answering your previous question. Wait for
    # it, or press Stop.": that question and its Stop button were in the other tab.
    scripted.enqueue(text_response(["Still ", "going"], hold=True))
    first = open_page(PHONE)
    first.goto(site + "/")
    first.locator("#chat-launcher").click()
    ask(first, "A long question")
    expect(first.locator(".chat-answer")).to_have_text("Still going")

    second = first.context.new_page()
    second.goto(site + "/")
    second.locator("#chat-launcher").click()
    ask(second, "Another question")
    note = second.locator(".chat-turn").last.locator(".chat-note__text").first
    expect(note).to_have_text(
        "Another answer of this chat is still running, perhaps in another tab. "
        "Ask again once it has finished."
    )
    expect(second.locator("#chat-stop")).to_be_hidden()
    screenshot(second, "busy-other-tab")
    first.get_by_role("button", name="Stop").click()
    expect(first.locator(".chat-note--muted")).to_have_text("Stopped.")


def test_a_search_refused_by_the_rate_limit_says_so_in_chinese(site, open_page):
    # The chip's reason stayed in English ("too many searches") in the Chinese panel.
    def on_frame(socket, frame):
        if frame["type"] != "message":
            return
        socket.start()
        call = {"call_id": "c1", "name": "search_knowledge_base"}
        socket.send({"type": "tool_start", **call, "arguments": {"query": "步数"}})
        socket.send({"type": "tool_end", **call, "ok": False, "duration_ms": 3.0,
                     "summary": "too many searches"})  # fmt: skip
        socket.text("没搜到。")
        socket.done()

    page = open_page(PHONE, locale="zh-CN")
    ChatRoute(page, on_frame)
    page.goto(site + "/")
    page.locator("#chat-launcher").click()
    ask(page, "怎么限制步数？")
    expect(page.locator(".chat-step__label")).to_have_text("未能搜索“步数”")
    expect(page.locator(".chat-step__meta")).to_have_text("搜索过于频繁 · 3 毫秒")


@pytest.mark.parametrize(
    ("locale", "reason", "said"),
    [
        ("zh-CN", "network", "你所在网络中有很多人在同时提问。请稍后再问。"),
        ("en-US", "session", "Answers in your other chats are still running."),
    ],
)
def test_busy_says_what_it_waits_for(site, open_page, locale, reason, said):
    # Every `busy` read "Another answer of this chat is still running, perhaps in another
    # tab": an office whose shared address had too many answers running was told of a tab.
    def on_frame(socket, frame):
        if frame["type"] == "message":
            socket.error("busy", "Too many answers are running at once.", reason=reason)

    page = open_page(PHONE, locale=locale)
    ChatRoute(page, on_frame)
    page.goto(site + "/")
    page.locator("#chat-launcher").click()
    ask(page, "Why cap the steps?")
    expect(page.locator(".chat-note--warn .chat-note__text")).to_contain_text(said)
    expect(page.locator("#chat-input")).to_have_value("Why cap the steps?")
