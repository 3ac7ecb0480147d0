"""Migration 0009: existing turns are labelled `small_talk` by the rule new turns use."""

from datetime import UTC, datetime

import pytest

from tests.agent.migrations.test_0005_answered import migrate

BEFORE = [("agent", "0008_verbose_names")]
AFTER = [("agent", "0009_turn_small_talk")]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_old_thanks_and_greetings_leave_the_unanswered_backlog():
    old = migrate(BEFORE)
    Conversation, Turn = old.get_model("agent", "Conversation"), old.get_model("agent", "Turn")
    conversation = Conversation.objects.create(session_key="s")
    for n, message in enumerate(["thanks!", "你好", "thanks, what is RRF?"], start=1):
        Turn.objects.create(
            conversation=conversation, index=n, user_message=message, status="done",
            started_at=datetime(2026, 11, 1, tzinfo=UTC),
        )  # fmt: skip

    Turn = migrate(AFTER).get_model("agent", "Turn")

    labelled = dict(Turn.objects.values_list("user_message", "small_talk"))
    assert labelled == {"thanks!": True, "你好": True, "thanks, what is RRF?": False}
