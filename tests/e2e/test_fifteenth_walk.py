"""The fifteenth first-run walk, as three people: an author writing their first article, a reader
on a phone, and an admin reviewing a busy week. What each tripped on first, fixed and checked
in Chromium."""

from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from playwright.sync_api import expect

from testing_support.model_server import text_response
from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.test_answer_shapes import chunks
from tests.e2e.test_chat_panel import ask, open_chat, wait_answered
from tests.e2e.test_rough_edges import ask_and_wait, reviewer, sign_in  # noqa: F401
from tests.e2e.test_rough_edges import open_chat as open_chat_in_any_language

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


@pytest.mark.parametrize(
    ("locale", "viewport", "everything", "old", "new"),
    [("en-US", {"width": 1280, "height": 800}, "All time",
      "How do I keep bees on a roof?", "How do I brew kombucha at home?"),
     ("zh-CN", {"width": 390, "height": 844}, "全部", "屋顶上怎么养蜜蜂？", "在家怎么酿康普茶？")],
)  # fmt: skip
def test_what_readers_could_not_get_answered_this_week_is_one_click_from_the_dashboard(
    offline_site,
    live_data,
    open_page,
    reviewer,  # noqa: F811
    locale,
    viewport,
    everything,
    old,
    new,
):
    # The dashboard's week led to a page of every question ever asked, with no period: "what
    # could we not answer this week?" meant reading dates off a list of 146 questions.
    conversation = ask_and_wait(offline_site, open_page(), old)
    # Asked three weeks ago: its turn moved back, as a clock would have left it; committed on
    # a connection of its own, outside the test's transaction, so the site's server sees it.
    with psycopg.connect(live_data, autocommit=True) as connection:
        connection.execute(
            "UPDATE agent_turn SET started_at = started_at - %s WHERE conversation_id = %s",
            (timedelta(days=21), conversation),
        )
    ask_and_wait(offline_site, open_page(), new)

    page = open_page(viewport, locale=locale)
    sign_in(page, offline_site, reviewer)
    page.goto(f"{offline_site}/admin/agent/conversation/dashboard/?days=7")
    page.get_by_test_id("unanswered-top").locator("a[href*='/unanswered/']").click()

    expect(page).to_have_url(f"{offline_site}/admin/agent/conversation/unanswered/?days=7")
    periods = page.get_by_test_id("unanswered-periods")
    week = "7 days" if locale == "en-US" else "7 天"
    expect(periods.locator("[aria-current=page]")).to_have_text(week)
    expect(page.get_by_test_id("unanswered-period")).to_be_visible()
    questions = page.locator(".dc-questions").first
    expect(questions).to_contain_text(new)
    expect(questions).not_to_contain_text(old)
    screenshot(page, f"fifteenth-unanswered-week-{locale}")

    periods.get_by_role("link", name=everything).click()
    expect(page.locator(".dc-questions").first).to_contain_text(old)
    expect(page.get_by_test_id("unanswered-period")).to_have_count(0)


@pytest.mark.parametrize(
    ("locale", "withdrawn"),
    [("en-US", "may have been withdrawn"), ("zh-CN", "可能已被撤下")],
)  # fmt: skip
def test_a_citation_to_an_article_since_withdrawn_leads_to_the_sites_page_and_back(
    site,
    scripted,
    open_page,
    reviewer,  # noqa: F811
    locale,
    withdrawn,
):
    # The author unpublished an article the chat had cited on a reader's open tab: the reader's
    # click on the old citation met `make run`'s DEBUG page (Django's URL patterns, no site, no
    # chat), with nothing saying the article had been taken down.
    author = open_page({"width": 1280, "height": 800}, locale=locale)
    sign_in(author, site, reviewer)
    author.goto(f"{site}/admin/blog/article/add/")
    author.fill("#id_title", f"Brewing kombucha {locale}")
    author.fill("#id_body", "Kombucha ferments for ten days.")
    author.fill("#id_slug", f"kombucha-{locale.lower()}")
    author.select_option("#id_status", "published")
    author.locator("input[name=_continue]").click()
    expect(author.locator(".messagelist .success")).to_have_count(1)
    change_url = author.url

    slug = f"kombucha-{locale.lower()}"
    scripted.enqueue(text_response([f"Ten days. Source: [Brewing kombucha](/articles/{slug}/)"]))
    reader = open_page({"width": 390, "height": 844}, locale=locale, is_mobile=True, has_touch=True)
    reader.goto(site + "/")
    open_chat_in_any_language(reader)
    ask(reader, "How long does kombucha ferment?")
    wait_answered(reader)

    author.select_option("#id_status", "draft")
    author.locator("input[name=_continue]").click()
    expect(author.locator(".messagelist .success")).to_have_count(1)

    try:
        reader.locator(".chat-answer a", has_text="Brewing kombucha").tap()
        expect(reader.locator("h1")).to_have_count(1)
        expect(reader.locator(".lede")).to_contain_text(withdrawn)
        screenshot(reader, f"fifteenth-withdrawn-{locale}")
        # The site's page carries the panel: the conversation is one tap away.
        open_chat_in_any_language(reader)
        expect(reader.locator(".chat-question").first).to_contain_text("kombucha")
    finally:
        author.goto(change_url.replace("/change/", "/delete/"))
        author.locator("input[type=submit]").first.click()
        expect(author.locator(".messagelist .success")).to_have_count(1)


def test_a_long_transcript_leads_the_reviewer_to_its_unanswered_turn(
    offline_site,
    open_page,
    reviewer,  # noqa: F811
):
    # A 100-turn conversation was 79,000 px of transcript: finding the turn the blog could not
    # answer meant scrolling through every other one.
    questions = [
        "What is reciprocal rank fusion?",
        "How do step limits work?",
        "What is pgvector?",
        "Who won the world cup in 1966?",
        "How does streaming work?",
        "What is HNSW?",
    ]
    reader = open_page()
    conversation = ask_and_wait(offline_site, reader, questions[0])
    for question in questions[1:]:
        ask(reader, question)
        wait_answered(reader)
    page = open_page({"width": 1280, "height": 800})
    sign_in(page, offline_site, reviewer)
    page.goto(f"{offline_site}/admin/agent/conversation/{conversation}/change/")

    index = page.get_by_test_id("turn-index")
    expect(index.locator("a")).to_have_count(len(questions))
    screenshot(page, "fifteenth-transcript-index")
    marked = index.locator("a.is-unanswered")
    expect(marked).to_have_count(1)
    expect(marked).to_have_attribute("title", questions[3])
    marked.click()
    expect(page).to_have_url(
        f"{offline_site}/admin/agent/conversation/{conversation}/change/#turn-4"
    )
    expect(page.locator("#turn-4")).to_be_in_viewport()
