"""No turn lost: recorded at its start, checkpointed while it streams, recovered after a crash."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agent import checkpoints
from agent.checkpoints import Checkpointer, turns_checkpoint, turns_recover
from agent.loop import TurnResult
from agent.models import Conversation, Turn, WorkerLease
from agent.services import TurnRecord, turn_record
from agent.turns import ChatMessage, Visitor, turn_prepare

VISITOR = Visitor(session_key="s1", client_ip="127.0.0.1")


def started_turn(question: str = "What is a mast?") -> Turn:
    prepared = turn_prepare(message=ChatMessage(content=question), visitor=VISITOR)
    return Turn.objects.get(pk=prepared.turn_id)


def record_for(turn: Turn, **fields) -> TurnRecord:
    return TurnRecord(
        turn_id=str(turn.pk),
        conversation_id=str(turn.conversation_id),
        session_key="s1",
        index=turn.index,
        user_message=turn.user_message,
        started_at=turn.started_at.isoformat(),
        **{"status": "done", "answer": "A mast holds the airship.", **fields},
    )


@pytest.mark.django_db
def test_a_turn_is_recorded_running_with_its_question_before_the_model_is_called():
    turn = started_turn()

    assert (turn.status, turn.user_message, turn.index) == ("running", "What is a mast?", 1)
    assert turn.worker == checkpoints.WORKER_NAME
    assert Conversation.objects.get().turns_started == 1


@pytest.mark.django_db
def test_a_checkpoint_writes_the_text_so_far_and_renews_the_lease():
    turn = started_turn()

    turns_checkpoint(texts=[(str(turn.pk), "A mast")], worker="w1")

    turn.refresh_from_db()
    assert turn.answer == "A mast" and turn.checkpointed_at is not None
    assert WorkerLease.objects.filter(name="w1").exists()


@pytest.mark.django_db
def test_a_checkpoint_never_overwrites_a_completed_turn():
    turn = started_turn()
    turn_record(record=record_for(turn))

    turns_checkpoint(texts=[(str(turn.pk), "A m")], worker="w1")

    turn.refresh_from_db()
    assert turn.answer == "A mast holds the airship."


@pytest.mark.django_db
def test_recovery_marks_only_the_turns_of_workers_whose_lease_lapsed():
    now = timezone.now()
    dead, alive, fresh = started_turn("dead?"), started_turn("alive?"), started_turn("new?")
    long_ago = now - timedelta(minutes=2)
    Turn.objects.filter(pk__in=[dead.pk, alive.pk]).update(started_at=long_ago)
    Turn.objects.filter(pk=dead.pk).update(worker="dead-worker", answer="Half an ans")
    Turn.objects.filter(pk=alive.pk).update(worker="alive-worker")
    Turn.objects.filter(pk=fresh.pk).update(worker="unknown-but-just-started")
    WorkerLease.objects.create(name="dead-worker", renewed_at=long_ago)
    WorkerLease.objects.create(name="alive-worker", renewed_at=now)

    [recovered] = turns_recover(lease_seconds=30, now=now)
    assert (recovered.turn_id, recovered.worker) == (str(dead.pk), "dead-worker")

    statuses = dict(Turn.objects.values_list("user_message", "status"))
    assert statuses == {"dead?": "interrupted", "alive?": "running", "new?": "running"}
    dead.refresh_from_db()
    assert dead.answer == "Half an ans" and dead.error_code == "unavailable"


@pytest.mark.django_db
def test_a_turn_whose_process_is_gone_is_recovered_at_once_not_when_its_lease_lapses():
    """A killed web process's turn read "running" for 30-45 s more (its lease was fresh),
    though the process was known gone: its lock had been taken off at once (agent.holders)."""
    import subprocess
    import sys

    killed = subprocess.Popen([sys.executable, "-c", "pass"])  # noqa: S603
    killed.wait()  # reaped: its pid is gone
    host, _pid, rand, space = checkpoints.WORKER_NAME.split(":")
    dead_name = f"{host}:{killed.pid}:{rand}:{space}"
    now = timezone.now()
    dead = started_turn("dead?")
    started_turn("alive?")  # run by this process, which runs
    Turn.objects.filter(pk=dead.pk).update(worker=dead_name)
    WorkerLease.objects.create(name=dead_name, renewed_at=now)  # renewed a moment ago

    [recovered] = turns_recover(lease_seconds=30, now=now)

    assert (recovered.turn_id, recovered.worker, recovered.gone) == (str(dead.pk), dead_name, True)
    statuses = dict(Turn.objects.values_list("user_message", "status"))
    assert statuses == {"dead?": "interrupted", "alive?": "running"}


@pytest.mark.django_db
def test_the_final_save_completes_the_running_row_once():
    turn = started_turn()
    tool_call = {
        "step": 1,
        "call_id": "c1",
        "name": "search_knowledge_base",
        "arguments": {"query": "mast"},
        "result": [],
        "ok": True,
        "error": "",
        "executed": True,
        "started_at": timezone.now().isoformat(),
        "duration_ms": 1.0,
    }
    record = record_for(turn, tool_calls=[tool_call])

    assert turn_record(record=record) is True
    assert turn_record(record=record) is False  # a retry or a replay

    turn.refresh_from_db()
    assert turn.status == "done" and turn.tool_calls.count() == 1
    assert Turn.objects.count() == 1


@pytest.mark.django_db
def test_a_late_final_save_replaces_what_recovery_guessed():
    turn = started_turn()
    Turn.objects.filter(pk=turn.pk).update(status="interrupted", answer="A m")

    assert turn_record(record=record_for(turn)) is True

    turn.refresh_from_db()
    assert turn.status == "done" and turn.answer == "A mast holds the airship."


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_checkpointer_writes_mid_step_text_of_every_running_turn(settings):
    from channels.db import database_sync_to_async

    settings.AGENT_CHECKPOINT_SECONDS = 3600  # only the explicit tick below
    turn = await database_sync_to_async(started_turn)()
    result = TurnResult(answer="Step one. ")
    result.streaming = ["A ", "mast"]  # the current step, not yet joined
    checkpointer = Checkpointer()

    checkpointer.track(str(turn.pk), result)
    await checkpointer.tick()
    checkpointer.forget(str(turn.pk))

    await turn.arefresh_from_db()
    assert turn.answer == "Step one. A mast"
    assert await WorkerLease.objects.filter(name=checkpoints.WORKER_NAME).aexists()


@pytest.mark.django_db
def test_the_final_save_of_a_running_turn_is_one_statement_that_touches_the_conversation():
    turn = started_turn()
    before = Conversation.objects.get().updated_at

    with CaptureQueriesContext(connection) as queries:
        assert turn_record(record=record_for(turn, citations=[{"article_id": 7}])) is True

    assert len(queries) == 1
    turn.refresh_from_db()
    assert (turn.status, turn.answer, turn.citations) == (
        "done",
        "A mast holds the airship.",
        [{"article_id": 7}],
    )
    assert Conversation.objects.get().updated_at > before


@pytest.mark.django_db
def test_a_turn_whose_start_was_never_recorded_is_still_saved_whole():
    turn = started_turn()
    record = record_for(turn)
    Turn.objects.all().delete()

    assert turn_record(record=record) is True

    assert Turn.objects.get().answer == "A mast holds the airship."


@pytest.mark.django_db
def test_small_talk_is_marked_when_the_turn_starts_and_when_saved_whole():
    thanks, question = started_turn("Thanks a lot!"), started_turn("What is a mast?")
    assert (thanks.small_talk, question.small_talk) == (True, False)

    record = record_for(thanks)
    Turn.objects.all().delete()  # its start was never recorded
    turn_record(record=record)

    assert Turn.objects.get().small_talk is True


@pytest.mark.django_db
def test_a_new_conversations_first_turn_is_recorded_in_one_short_transaction():
    with CaptureQueriesContext(connection) as queries:
        prepared = turn_prepare(message=ChatMessage(content="What is a mast?"), visitor=VISITOR)

    # The conversation and the turn, nothing read: it has no history yet.
    statements = [q["sql"].split()[0] for q in queries]
    assert [s for s in statements if s not in ("SAVEPOINT", "RELEASE")] == ["INSERT", "INSERT"]
    turn = Turn.objects.get(pk=prepared.turn_id)
    assert (turn.index, turn.status, Conversation.objects.get().turns_started) == (1, "running", 1)
