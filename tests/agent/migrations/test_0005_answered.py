"""Migration 0005: existing turns are labelled `answered` by the same rule new turns use."""

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("agent", "0004_cluster_turn_lease")]
AFTER = [("agent", "0005_librarian_answered_feedback")]
CITED = [{"article_id": 1, "title": "T", "url": "/articles/t/"}]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("back_to_latest")
def test_old_rows_get_answered_from_citations_declines_and_no_answer():
    old = migrate(BEFORE)
    Conversation, Turn = old.get_model("agent", "Conversation"), old.get_model("agent", "Turn")
    conversation = Conversation.objects.create(session_key="s")
    rows = {
        "cited": ("done", "Cap it at five.", CITED, False),
        "declined": ("done", "I couldn't find anything about that in this blog's articles.",
                     [], True),
        # Saved before this issue: cited the nearest article while saying "not covered".
        "declined_with_link": ("done", "The blog doesn't cover that. See [T](/articles/t/).",
                               CITED, False),
        "uncited": ("done", "Probably five.", [], False),
        "cancelled": ("cancelled", "Cap it", CITED, False),
    }  # fmt: skip
    for n, (name, (status, answer, citations, no_answer)) in enumerate(rows.items(), start=1):
        Turn.objects.create(
            conversation=conversation, index=n, user_message=name, answer=answer,
            status=status, citations=citations, no_answer=no_answer,
            started_at=datetime(2026, 11, 1, tzinfo=UTC),
        )  # fmt: skip

    new = migrate(AFTER)

    labelled = dict(new.get_model("agent", "Turn").objects.values_list("user_message", "answered"))
    assert labelled == {
        "cited": True,
        "declined": False,
        "declined_with_link": False,
        "uncited": False,
        "cancelled": False,
    }
