"""Walk 21 in the admin, in Chromium: every text at WCAG AA contrast, light and dark."""

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from tests.agent.admin.factories import make_conversation, make_turn
from tests.e2e.conftest import sign_in
from tests.e2e.contrast import contrast_failures

REFUSED_KEY = "The language model rejected this site’s credentials."


@pytest.fixture
def refused(transactional_db):
    """An editor, and a conversation whose last turn the model endpoint refused (before the
    browser starts: the ORM is not called while Playwright's loop runs)."""
    get_user_model().objects.create_superuser("editor", "e@example.com", "a-long-password")
    conversation = make_conversation()
    make_turn(conversation, user_message="Is there a post on HNSW?", answered=False)
    make_turn(conversation, status="error", error_code="model_error", error=REFUSED_KEY,
              started_at=timezone.now(), answer="")  # fmt: skip
    return conversation


@pytest.mark.e2e
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_admins_pages_meet_aa_contrast(live_server, refused, browser, scheme):
    # The model endpoint's card linked its failed turn in Django's blue, 4.29:1 on its yellow;
    # the sidebar's filter box's placeholder stood at 4.34:1, 3.49:1 in the dark.
    conversation = refused
    page = browser.new_page(viewport={"width": 1280, "height": 860}, color_scheme=scheme)
    sign_in(page, live_server.url)
    for path in (
        "/admin/",
        "/admin/agent/conversation/",
        "/admin/agent/conversation/dashboard/",
        "/admin/agent/conversation/unanswered/",
        f"/admin/agent/conversation/{conversation.pk}/change/",
    ):
        page.goto(live_server.url + path)
        assert contrast_failures(page) == [], path
    page.close()
