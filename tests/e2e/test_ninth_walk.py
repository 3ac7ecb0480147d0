"""The ninth first-run walk (reader; phone and desktop, English and Chinese): what it found,
fixed and checked in Chromium."""

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e import test_rough_edges
from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.sockets import CONVERSATION, ChatRoute
from tests.e2e.test_chat_panel import ask
from tests.e2e.test_rough_edges import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

NARROW = {"width": 375, "height": 740}

reviewer = test_rough_edges.reviewer  # the admin account, a fixture


def open_saved_conversation(page, site: str, transcript, on_open) -> ChatRoute:
    """Open the panel on a page whose browser remembers CONVERSATION: its transcript served by
    `transcript`, each chat socket's opening handled by `on_open`."""
    page.route(re.compile(rf"/api/conversations/{CONVERSATION}$"), transcript)
    route = ChatRoute(page, lambda socket, frame: None, on_open)
    page.goto(site + "/")
    page.evaluate(f"localStorage.setItem('docent.chat.conversation', '{CONVERSATION}')")
    page.reload()
    page.locator("#chat-launcher").click()
    return route


@pytest.mark.parametrize(
    ("locale", "unavailable", "status"),
    [
        (
            "en-US",
            "The assistant is unavailable for a moment. Reconnecting…",
            "Connection lost. Reconnecting…",
        ),
        ("zh-CN", "助手暂时不可用，正在重新连接…", "连接已断开，正在重新连接…"),
    ],
)
def test_a_database_outage_says_reconnecting_once(site, open_page, locale, unavailable, status):
    # During a database outage a message is refused `unavailable` and every new socket is
    # refused too (its session cannot be read). The turn's note said "unavailable … Reconnecting…"
    # and the status line above the log said "Connection lost. Reconnecting…" with it.
    def on_frame(socket, frame):
        if frame["type"] == "message":
            socket.error("unavailable", "The database is unavailable.")

    def on_open(socket):
        if socket.number > 1:
            socket.close()

    page = open_page(NARROW, locale=locale)
    route = ChatRoute(page, on_frame, on_open)
    page.goto(site + "/")
    page.locator("#chat-launcher").click()
    ask(page, "Is the database there?")
    expect(page.locator(".chat-note--warn .chat-note__text")).to_have_text(unavailable)
    route.wait_for_sockets(3)  # the panel's fresh socket was refused, and so was a retry
    assert len(route.sockets) >= 3
    expect(page.locator("#chat-status")).to_be_hidden()
    screenshot(page, f"outage-reconnecting-once-{locale}")

    # A question asked now waits on the connection: that wait is the status line's to tell.
    page.locator("#chat-input").fill("")
    ask(page, "And now?")
    expect(page.locator("#chat-status")).to_have_text(status)


@pytest.mark.parametrize(("locale", "other"), [("zh-CN", "English"), ("en-US", "中文")])
def test_a_narrow_header_marks_its_lone_language_button_as_a_switch(site, open_page, locale, other):
    # Narrow, the switch offers only the other language. In the Chinese header, beside an
    # English article's title, a bare "English" read as the page's language, not as a switch.
    page = open_page(NARROW, locale=locale)
    page.goto(site + "/articles/why-step-limits-matter/")
    shown = page.locator(".lang-switch button:visible")
    expect(shown).to_have_count(1)
    expect(shown).to_have_accessible_name(other)
    expect(shown.locator(".lang-switch__icon")).to_be_visible()
    header = page.locator(".site-header__inner")
    assert header.evaluate("n => n.scrollWidth <= n.clientWidth")  # one line, nothing spills
    screenshot(page, f"narrow-language-switch-{locale}")

    # Beside the open panel a tablet's column is as narrow (a container query): the same.
    page.set_viewport_size({"width": 740, "height": 800})
    page.locator("#chat-launcher").click()
    expect(shown).to_have_count(1)
    expect(shown.locator(".lang-switch__icon")).to_be_visible()

    # With room for both, the filled current language says it; no globe.
    page.set_viewport_size({"width": 1280, "height": 800})
    expect(page.locator(".lang-switch button:visible")).to_have_count(2)
    expect(page.locator(".lang-switch__icon:visible")).to_have_count(0)


# Each choice of the tags filter that is drawn outside what its list shows (a scrolled-away one).
TAGS_CUT_OFF = """() => {
  const list = [...document.querySelectorAll('#changelist-filter details')]
    .find((d) => d.querySelector('a[href*="tags__"]')).querySelector('ul');
  const shown = list.getBoundingClientRect();
  return [...list.querySelectorAll('li')].filter((li) => {
    const b = li.getBoundingClientRect();
    return b.bottom > shown.bottom + 0.5 || b.right > shown.right + 0.5;
  }).map((li) => li.textContent.trim());
}"""


@pytest.mark.parametrize(
    "viewport", [{"width": 1280, "height": 860}, {"width": 390, "height": 844}]
)
def test_every_tag_of_the_articles_filter_is_in_sight(site, open_page, reviewer, viewport):
    # The filter's choices scrolled inside 9rem: the demo's 13 tags stopped at "limits", cut
    # exactly at a line, and with overlay scrollbars (macOS, phones) nothing said there was more.
    page = open_page(viewport)
    sign_in(page, site, reviewer)
    page.goto(f"{site}/admin/blog/article/")
    tags = page.locator("#changelist-filter details").filter(has=page.locator('a[href*="tags__"]'))
    if tags.get_attribute("open") is None:  # a phone folds a filter left at "All"
        tags.locator("summary").click()
    expect(tags.get_by_role("link", name="streaming")).to_be_visible()
    assert page.evaluate(TAGS_CUT_OFF) == []
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    screenshot(page, f"admin-tags-filter-{viewport['width']}")


PAST = {
    "id": CONVERSATION,
    "turns": [
        {"turn": 1, "user_message": "Asked before the outage", "answer": "Answered then.",
         "status": "done", "tools": [], "citations": []},
    ],
}  # fmt: skip


@pytest.mark.parametrize(
    ("locale", "waiting"),
    [
        ("en-US", "The earlier messages couldn’t be loaded. Reconnecting to load them…"),
        ("zh-CN", "无法加载之前的消息，正在重新连接以加载…"),
    ],
)
def test_a_conversation_the_outage_kept_from_loading_comes_back_with_the_database(
    site, open_page, locale, waiting
):
    # The panel opened during a database outage: its transcript's request got a 503 and every
    # socket was refused. It said "Connection lost. Reconnecting…" at the top and "The earlier
    # messages couldn't be loaded." at the bottom, and when the database came back it never
    # loaded them: the welcome stayed, and the next question went on with a conversation the
    # visitor could not see.
    outage = {"on": True}

    def transcript(route):
        if outage["on"]:
            route.fulfill(status=503, body="Docent is briefly unavailable")
        else:
            route.fulfill(status=200, content_type="application/json", body=json.dumps(PAST))

    def on_open(socket):
        if outage["on"]:
            socket.close()

    page = open_page(NARROW, locale=locale)
    route = open_saved_conversation(page, site, transcript, on_open)
    note = page.locator("#chat-log .chat-status--inline")
    expect(note).to_have_text(waiting)
    route.wait_for_sockets(2)  # refused, and refused again
    expect(page.locator("#chat-status")).to_be_hidden()  # one message, not two
    screenshot(page, f"outage-restore-waiting-{locale}")

    outage["on"] = False  # the next socket gets through: the database is back
    # The panel backs off between attempts (up to 15 s); a few have failed by now.
    expect(page.locator(".chat-turn .chat-answer")).to_have_text("Answered then.", timeout=20_000)
    expect(note).to_have_count(0)
    expect(page.locator("#chat-empty")).to_be_hidden()
    assert len(route.sockets) >= 3


def test_on_a_phone_the_article_body_is_more_than_four_lines(site, open_page, reviewer):
    # Django's phone layout caps every textarea at 120 px: the body, where the author writes
    # the article, showed four lines of Markdown at 390 px.
    page = open_page({"width": 390, "height": 844}, locale="zh-CN")
    sign_in(page, site, reviewer)
    page.goto(f"{site}/admin/blog/article/add/")
    body = page.locator("#id_body")
    height = body.evaluate("n => n.clientHeight / innerHeight")
    assert height > 0.5
    summary = page.locator("#id_summary").evaluate("n => n.clientHeight")
    assert summary <= 120  # the one or two sentences keep Django's small box
    body.scroll_into_view_if_needed()
    screenshot(page, "admin-phone-article-body")


def test_a_conversation_the_network_kept_from_loading_comes_back_with_it(offline_site, open_page):
    # Opened with the network gone, the panel said "You're offline" and "The earlier messages
    # couldn't be loaded." Back online it still showed the welcome, the conversation unseen.
    page = open_page(NARROW)
    page.goto(offline_site + "/")
    page.locator("#chat-launcher").click()
    ask(page, "Is anyone there?")
    expect(page.locator(".chat-turn .chat-answer")).to_have_count(1)
    expect(page.locator("#chat-send")).to_be_visible()
    page.locator("#chat-close").click()
    page.reload()

    page.context.set_offline(True)
    page.locator("#chat-launcher").click()
    note = page.locator("#chat-log .chat-status--inline")
    expect(note).to_have_text("The earlier messages couldn’t be loaded.")
    expect(page.locator("#chat-status")).to_have_text("You’re offline. Waiting for the network…")
    expect(page.locator(".chat-turn")).to_have_count(0)

    page.context.set_offline(False)
    expect(page.locator(".chat-turn .chat-question__text")).to_have_text("Is anyone there?")
    expect(note).to_have_count(0)
    expect(page.locator("#chat-status")).to_be_hidden()


def test_a_question_asked_before_the_conversation_loaded_has_the_status_line(site, open_page):
    # A question asked while the earlier messages could not be loaded waits on the connection:
    # the status line says so, and the note no longer promises them (they would land below it).
    def on_open(socket):
        socket.close()  # the outage goes on

    def transcript(route):
        route.fulfill(status=503, body="Docent is briefly unavailable")

    page = open_page(NARROW)
    route = open_saved_conversation(page, site, transcript, on_open)
    note = page.locator("#chat-log .chat-status--inline")
    expect(note).to_contain_text("Reconnecting to load them")
    route.wait_for_sockets(2)

    ask(page, "Anyone?")
    expect(page.locator("#chat-status")).to_have_text("Connection lost. Reconnecting…")
    expect(note).to_have_text("The earlier messages couldn’t be loaded.")
