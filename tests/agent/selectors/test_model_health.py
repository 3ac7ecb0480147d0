"""The dashboard's word on a failing model endpoint: which setting to check."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from agent import selectors
from agent.models import Conversation, Turn

pytestmark = pytest.mark.django_db

SINCE = (timezone.now() - timedelta(days=1)).date()
NOT_FOUND = "The language model returned an error (HTTP 404)."
REFUSED_KEY = "The language model rejected this site’s credentials."


def _turn(conversation, index: int, minutes: int, **fields) -> Turn:
    started = timezone.now() - timedelta(minutes=minutes)
    defaults = {"status": "done", "model": "gpt-4o-mnii", "started_at": started}
    return Turn.objects.create(
        conversation=conversation, index=index, user_message="q", **{**defaults, **fields}
    )


@pytest.fixture
def conversation():
    return Conversation.objects.create(session_key="s")


def _failed(conversation, index: int, minutes: int, error: str) -> Turn:
    return _turn(
        conversation, index, minutes, status="error", error_code="model_error", error=error
    )


def test_failures_since_the_last_answer_name_the_setting(conversation, settings):
    settings.OPENAI_BASE_URL = "http://user:secret@models.internal:8001/v1"
    _failed(conversation, 1, 30, REFUSED_KEY)
    _turn(conversation, 2, 20)
    _failed(conversation, 3, 10, NOT_FOUND)
    _failed(conversation, 4, 5, NOT_FOUND)

    trouble = selectors.model_trouble(since=SINCE)

    assert trouble.failures == 2 and trouble.latest.index == 4
    assert trouble.endpoint == "http://models.internal:8001/v1"  # no credentials shown
    assert "AGENT_MODEL" in trouble.advice and "“gpt-4o-mnii”" in trouble.advice
    assert "secret" not in trouble.advice


@pytest.mark.parametrize(
    ("error", "setting"),
    [(REFUSED_KEY, "OPENAI_API_KEY"),
     ("The language model could not be reached.", "OPENAI_BASE_URL"),
     ("The language model timed out.", "AGENT_MODEL_TIMEOUT")],
)  # fmt: skip
def test_each_failure_names_its_setting(conversation, error, setting):
    _failed(conversation, 1, 5, error)
    assert setting in selectors.model_trouble(since=SINCE).advice


def test_an_answer_after_the_failures_clears_it(conversation):
    _failed(conversation, 1, 10, NOT_FOUND)
    _turn(conversation, 2, 5)
    _turn(conversation, 3, 1, offline=True, model="")  # the offline model's say nothing here
    assert selectors.model_trouble(since=SINCE) is None


@pytest.mark.parametrize(
    ("error", "reason"),
    [(REFUSED_KEY, "setup"), (NOT_FOUND, "setup"),
     ("The language model could not be reached.", ""),
     ("The language model returned an error (HTTP 500).", "")],
)  # fmt: skip
def test_a_saved_refusal_of_the_sites_settings_reads_setup_in_the_transcript(
    conversation, error, reason
):
    # A new tab restored the turn as "isn't responding right now" (an outage: ask again);
    # live it was the site's settings, which asking again cannot mend (walk 21).
    _failed(conversation, 1, 5, error)

    transcript = selectors.conversation_restore(conversation=conversation)

    assert transcript["turns"][0]["reason"] == reason


def test_the_admins_index_names_the_refused_setting_until_a_turn_is_answered(
    conversation, staff_client, settings
):
    # The reader is told the assistant is unavailable, not why; the operator who signed in
    # read nothing on the index, the cause only on the dashboard and in the log (walk 21).
    settings.OPENAI_BASE_URL = "http://models.internal:8001/v1"
    _failed(conversation, 1, 5, REFUSED_KEY)

    page = staff_client.get("/admin/").content.decode()

    assert "The language model failed the last turn: readers get no answers" in page
    assert "Check OPENAI_API_KEY" in page
    _turn(conversation, 2, 1)
    assert "readers get no answers" not in staff_client.get("/admin/").content.decode()


def test_the_admins_index_says_nothing_of_the_model_to_who_may_not_read_conversations(
    conversation, client
):
    author = get_user_model().objects.create_user("author", password="pw", is_staff=True)
    client.force_login(author)
    _failed(conversation, 1, 5, REFUSED_KEY)

    assert "readers get no answers" not in client.get("/admin/").content.decode()
