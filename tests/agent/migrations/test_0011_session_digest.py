"""Migration 0011: a conversation's session key (the cookie itself) becomes its digest."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from config.sessions import session_digest

BEFORE = [("agent", "0010_turn_listed_articles")]
AFTER = [("agent", "0011_conversation_session_digest")]
COOKIE = "k" * 16 + "0123456789abcdef"


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_keys_become_digests_and_a_digest_or_label_stays():
    old = migrate(BEFORE)
    Conversation = old.get_model("agent", "Conversation")
    digested = session_digest("d" * 32)
    for key in (COOKIE, digested, "eval-abc"):
        Conversation.objects.create(session_key=key)

    new = migrate(AFTER)
    kept = set(new.get_model("agent", "Conversation").objects.values_list("session_key", flat=True))
    assert kept == {session_digest(COOKIE), digested, "eval-abc"}
    assert COOKIE not in kept and len(session_digest(COOKIE)) == 40

    # Run again (as after a rollback to 0010 and forward): a digest is never digested twice.
    migrate(BEFORE)
    again = migrate(AFTER)
    assert (
        set(again.get_model("agent", "Conversation").objects.values_list("session_key", flat=True))
        == kept
    )
