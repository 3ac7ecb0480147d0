"""The tenth first-run walk (reader, author and admin; phone and desktop, English and Chinese):
what it found, fixed and checked in Chromium."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e import test_rough_edges
from tests.e2e.conftest import CHROMIUM, screenshot
from tests.e2e.test_rough_edges import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db]

if not Path(CHROMIUM).exists():
    pytest.skip(f"no {CHROMIUM}: apt-get install chromium (.ci/run does)", allow_module_level=True)

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}

reviewer = test_rough_edges.reviewer  # the admin account, a fixture


@pytest.fixture(scope="module")
def no_conversations(live_data, django_db_blocker):
    """No turn on the site: the admin's reports show their empty states (committed, so the
    site's server sees it; module-scoped, so outside each test's transaction)."""
    from agent.models import Conversation

    with django_db_blocker.unblock():
        Conversation.objects.all().delete()


# How far below the page's header each empty state's first line of text starts.
EMPTY_TEXT_GAPS = """() => {
  const header = document.querySelector('.dc-unanswered > .dc-header').getBoundingClientRect();
  return [...document.querySelectorAll('.dc-unanswered > .dc-empty')].map((p) => {
    const text = document.createRange();
    text.selectNodeContents(p);
    return text.getBoundingClientRect().top - header.bottom;
  });
}"""


@pytest.mark.parametrize(("viewport", "locale"), [(DESKTOP, "en-US"), (PHONE, "zh-CN")])
def test_the_unanswered_page_s_empty_state_starts_where_its_list_would(
    site, open_page, reviewer, no_conversations, viewport, locale
):
    # "Nothing to write about yet" sat 2rem (the shared .dc-empty padding) below where the first
    # question's card starts, under the header's own margin: a gap that read as a missing row.
    page = open_page(viewport, locale=locale)
    sign_in(page, site, reviewer)
    page.goto(f"{site}/admin/agent/conversation/unanswered/")
    expect(page.locator(".dc-unanswered > .dc-empty")).to_have_count(2)  # and no voted down
    header_margin = page.locator(".dc-unanswered > .dc-header").evaluate(
        "n => parseFloat(getComputedStyle(n).marginBottom)"
    )
    first_gap = page.evaluate(EMPTY_TEXT_GAPS)[0]
    # Within the line's own leading of where the list would start; 2rem more before.
    assert header_margin <= first_gap < header_margin + 8, (first_gap, header_margin)
    screenshot(page, f"admin-unanswered-empty-{locale}")
