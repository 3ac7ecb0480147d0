"""Walk 18 in a real Chromium: what a reader who has talked a while with the panel met."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.model_server import error_response, text_response
from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.test_chat_panel import (
    STEP_LIMITS,
    ask,
    conversation_id,
    open_chat,
    saved_turns,
    wait_answered,
    words,
)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)


def test_a_copied_answer_links_the_site_by_its_whole_address(site, scripted, open_page):
    # Pasted into a mail, "[Why step limits matter](/articles/why-step-limits-matter/)" led
    # nowhere. Links elsewhere and code are copied as written.
    answer = (
        f"Cap the steps, as [the article](/articles/{STEP_LIMITS}/#sec-1) says; "
        "see also [the spec](https://example.org/spec).\n\n"
        "```md\n[kept](/as/written/)\n```"
    )
    scripted.enqueue(text_response(words(answer)))
    page = open_page()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)
    page.goto(site + "/")
    open_chat(page)
    ask(page, "Why cap the steps?")
    wait_answered(page)

    page.locator(".chat-copy--answer").click()
    expect(page.locator(".chat-copy--answer")).to_have_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    path = f"/articles/{STEP_LIMITS}/"
    assert copied == answer.replace(f"]({path}", f"]({site}{path}")
    # On the page the link stays the site's own.
    link = page.locator(".chat-answer a", has_text="the article")
    expect(link).to_have_attribute("href", f"/articles/{STEP_LIMITS}/#sec-1")


SETUP = "The assistant is unavailable at the moment. Everything else on the blog works as usual."


def test_a_model_refusing_the_sites_settings_says_so_after_a_reload(site, scripted, open_page):
    # Live the note said "isn't set up right… asking again won't help"; after a reload the
    # same turn read "isn't responding right now", and the reader asked again.
    scripted.enqueue(error_response(401, message="scripted refusal"))
    page = open_page()
    page.goto(site + "/")
    open_chat(page)
    ask(page, "Is the model set up?")
    wait_answered(page)
    expect(page.locator(".chat-turn .chat-note__text")).to_have_text(SETUP)
    saved_turns(conversation_id(page))

    page.reload()
    expect(page.locator(".chat-turn")).to_have_count(1)
    expect(page.locator(".chat-turn .chat-note__text")).to_have_text(SETUP)
    expect(page.locator(".chat-note")).to_have_count(1)


def test_a_table_wider_than_a_phone_shows_a_shade_where_it_scrolls(site, open_page):
    # It scrolled sideways with nothing on screen saying so: the columns past the edge were
    # never found. The shade sits on the side with more to see (site.css, `.prose table`).
    page = open_page({"width": 390, "height": 844})
    page.goto(f"{site}/articles/{STEP_LIMITS}/")
    page.evaluate(
        """() => {
          const table = document.createElement('table');
          const cells = Array.from({length: 8}, (_, i) => `<td>column_number_${i}</td>`);
          table.innerHTML = `<tbody><tr>${cells.join('')}</tr></tbody>`;
          document.querySelector('.prose').prepend(table);
          table.scrollIntoView();
          scrollBy(0, -200);  // out from under the sticky header
        }"""
    )
    table = page.locator(".prose table").first

    assert table.evaluate("(node) => node.scrollWidth > node.clientWidth")
    style = table.evaluate(
        "(node) => ((s) => [s.backgroundImage, s.backgroundAttachment])(getComputedStyle(node))"
    )
    assert style[0].count("radial-gradient") == 2, style  # the two shades
    assert style[1] == "local, local, scroll, scroll", style  # covers that scroll away
    screenshot(page, "eighteenth-wide-table-phone")
