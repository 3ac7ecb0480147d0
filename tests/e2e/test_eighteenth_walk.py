"""Walk 18 in a real Chromium: what a reader who has talked a while with the panel met."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from testing_support.model_server import text_response
from tests.e2e.conftest import CHROMIUM
from tests.e2e.test_chat_panel import STEP_LIMITS, ask, open_chat, wait_answered, words

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
