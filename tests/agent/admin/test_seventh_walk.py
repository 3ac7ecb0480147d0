"""What the seventh first-run walk found in the admin, fixed: checked in Chromium."""

import pytest

from agent.models import Turn
from tests.agent.admin.factories import make_conversation, make_turn
from tests.agent.admin.test_screenshots import SCREENSHOTS
from tests.e2e.conftest import sign_in

# What a visitor pastes: a link with no space to break at (120 characters).
PASTED = "https://example.com/" + "a-very-long-path-segment-" * 4 + "x" * 20
COMMENT = "see " + "y" * 150


@pytest.fixture
def pasted_turns(transactional_db):
    """A question nobody answered and an answer voted down, each one long word."""
    conversation = make_conversation()
    make_turn(conversation, user_message=f"Why does {PASTED} fail?", answered=False)
    make_turn(conversation, user_message=f"{PASTED}?", answer="It " + "z" * 150 + ".",
              vote=Turn.Vote.DOWN, feedback_comment=COMMENT)  # fmt: skip
    return conversation


@pytest.mark.e2e
def test_a_pasted_link_does_not_widen_the_review_pages(
    live_server, showcase, pasted_turns, browser
):
    # The 120-character link widened the transcript to 1,049 px and the Unanswered page to
    # 1,273 px on a 375 px phone (1,306 and 1,530 px at 1,280): the header, filters and every
    # other question shrank to a corner, and the page scrolled sideways.
    pages = [f"/admin/agent/conversation/{pasted_turns.pk}/change/",
             "/admin/agent/conversation/unanswered/"]  # fmt: skip
    wide = []
    for width in (375, 1280):
        page = browser.new_page(viewport={"width": width, "height": 800})
        sign_in(page, live_server.url)
        for path in pages:
            page.goto(f"{live_server.url}{path}")
            assert page.get_by_text(PASTED).first.is_visible()
            scroll, client = page.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            if scroll > client:
                wide.append((width, path, scroll))
        if width == 375:
            shot = SCREENSHOTS / "admin-unanswered-pasted-375.png"
            page.screenshot(path=str(shot), full_page=True)
        page.close()
    assert wide == []
