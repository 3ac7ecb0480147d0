"""Turns are saved after the answer, retried, spooled when the database is down, never lost."""

import os

import httpx
import psycopg
import pytest
from channels.db import database_sync_to_async
from django.core.management import call_command
from django.db import connection

from agent.consumers import ChatConsumer
from agent.models import Conversation, ToolCall, Turn
from agent.services import SPOOL_NAME, TurnRecord, spool_dir
from testing_support.live_server import LiveServer, database_url
from testing_support.model_server import text_response, tool_call_response
from tests.agent.chat_helpers import ask, connect, saved_turns

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.asyncio
async def test_done_is_sent_before_the_save_begins(scripted, monkeypatch):
    import agent.saving

    order: list[str] = []
    real_record, real_send = agent.saving.turn_record, ChatConsumer.send_json

    def recording_save(*, record):
        order.append("save begins")
        return real_record(record=record)

    async def recording_send(self, content, close=False):
        await real_send(self, content, close)
        order.append(f"sent {content['type']}")

    monkeypatch.setattr(agent.saving, "turn_record", recording_save)
    monkeypatch.setattr(ChatConsumer, "send_json", recording_send)
    scripted.enqueue(text_response(["Quick."]))
    socket = await connect()

    await ask(socket, "Be quick")
    await saved_turns()

    assert order == ["sent start", "sent text", "sent done", "save begins"]
    await socket.disconnect()


class DatabaseOutage:
    """A real outage of the test database: refuse new connections, cut the open ones."""

    def __init__(self) -> None:
        self.name = connection.settings_dict["NAME"]
        self.admin_url = os.environ["DATABASE_URL"]  # the server's `postgres` database

    def _run(self, sql: str) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as admin:
            admin.execute(sql)

    def begin(self) -> None:
        self._run(f'ALTER DATABASE "{self.name}" ALLOW_CONNECTIONS false')
        self._run(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE datname = '{self.name}' AND pid <> pg_backend_pid()"
        )

    def end(self) -> None:
        self._run(f'ALTER DATABASE "{self.name}" ALLOW_CONNECTIONS true')


def outage_as_saves_start(monkeypatch, outage: DatabaseOutage) -> list[str]:
    """The database goes away just as the first save starts, and saves retry at once.

    Returns:
        The save attempts, one entry each.
    """
    import agent.saving

    real_record, attempts = agent.saving.turn_record, []

    def save_during_outage(*, record):
        if not attempts:
            outage.begin()
        attempts.append("try")
        return real_record(record=record)

    monkeypatch.setattr(agent.saving, "turn_record", save_during_outage)
    monkeypatch.setattr(agent.saving.TurnSaver, "backoff", 0.01)
    return attempts


@pytest.fixture
def database_outage(transactional_db):
    """An outage that is over before the database is flushed.

    The outage also cuts this thread's connection, which an async test cannot close itself;
    left open, the flush after the test fails on it.
    """
    outage = DatabaseOutage()
    yield outage
    outage.end()
    connection.close()


@pytest.mark.asyncio
async def test_a_failed_save_is_spooled_then_replayed_once(
    scripted, monkeypatch, make_article, database_outage
):
    article = await database_sync_to_async(make_article)(title="Spool", slug="spool", body="Disk.")
    outage = database_outage
    attempts = outage_as_saves_start(monkeypatch, outage)
    scripted.enqueue(
        tool_call_response([("c1", "get_article_detail", f'{{"article_id": {article.pk}}}')]),
        text_response(["Saved later: [Spool](/articles/spool/)."]),
    )
    socket = await connect()
    try:
        events = await ask(socket, "Will this be lost?")
        from agent.runner import runner

        assert await runner.saver.drain(timeout=20)
    finally:
        outage.end()
    await socket.disconnect()

    assert events[-1]["type"] == "done"
    assert len(attempts) == 3  # AGENT_SAVE_RETRIES
    spooled = (spool_dir() / SPOOL_NAME).read_text().splitlines()
    assert len(spooled) == 1 and "Will this be lost?" in spooled[0]

    await database_sync_to_async(call_command)("replay_spool")
    await database_sync_to_async(call_command)("replay_spool")  # nothing doubled

    turns = await database_sync_to_async(lambda: list(Turn.objects.all()))()
    assert [(t.user_message, t.status, t.step_count) for t in turns] == [
        ("Will this be lost?", "done", 2)
    ]
    assert await database_sync_to_async(ToolCall.objects.count)() == 1
    assert not (spool_dir() / SPOOL_NAME).exists()


def test_replay_keeps_what_still_fails(settings, tmp_path):
    from agent.services import TurnRecord, spool_append, spool_replay

    good = TurnRecord(
        turn_id="00000000-0000-0000-0000-000000000001",
        conversation_id="00000000-0000-0000-0000-0000000000aa",
        session_key="s",
        index=1,
        user_message="kept",
        status="done",
        started_at="2026-11-30T10:00:00+00:00",
    )
    bad = TurnRecord(**{**good.__dict__, "turn_id": "not-a-uuid", "user_message": "broken"})
    spool_append(record=good)
    spool_append(record=bad)

    assert spool_replay() == (1, 0, 1)
    assert Turn.objects.get().user_message == "kept"
    assert "broken" in (spool_dir() / SPOOL_NAME).read_text()


def spooled_turn(**changes) -> TurnRecord:
    return TurnRecord(
        **{
            "turn_id": "00000000-0000-0000-0000-000000000002",
            "conversation_id": "00000000-0000-0000-0000-0000000000bb",
            "session_key": "s",
            "index": 1,
            "user_message": "spooled",
            "status": "done",
            "started_at": "2026-11-30T10:00:00+00:00",
            **changes,
        }
    )


def test_a_turn_the_database_refuses_is_set_aside_after_its_attempts(settings, tmp_path, caplog):
    """It used to go back into the spool on every replay, every 15 s, for ever."""
    from prometheus_client import REGISTRY

    from agent.services import SPOOL_REJECTED, spool_append, spool_replay

    def rejected_count() -> float:
        return REGISTRY.get_sample_value("docent_turns_spool_rejected_total") or 0.0

    settings.AGENT_SPOOL_ATTEMPTS = 3
    rejected_before = rejected_count()
    spool_append(record=spooled_turn(turn_id="not-a-uuid", user_message="broken"))
    with (spool_dir() / SPOOL_NAME).open("a") as spool:
        spool.write("{not json\n")

    assert spool_replay() == (0, 0, 1)  # the line that is not JSON is set aside at once
    assert spool_replay() == (0, 0, 1)
    assert spool_replay() == (0, 0, 0)  # the third failure: set aside, the spool is empty

    assert not (spool_dir() / SPOOL_NAME).exists()
    rejected = (spool_dir() / SPOOL_REJECTED).read_text().splitlines()
    assert rejected[0] == "{not json" and '"user_message": "broken"' in rejected[1]
    assert len(rejected) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("spooled turn not-a-uuid could not be saved (3 attempts)" in m for m in errors)
    assert rejected_count() == rejected_before + 2


@pytest.fixture
def refusing_turns():
    """A trigger on the turn table that makes PostgreSQL itself refuse each insert."""

    def refuse(body: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "CREATE FUNCTION refuse_turn() RETURNS trigger LANGUAGE plpgsql AS "
                f"$$ BEGIN {body}; RETURN NEW; END $$"
            )
            cursor.execute(
                "CREATE TRIGGER refuse_turn BEFORE INSERT ON agent_turn "
                "FOR EACH ROW EXECUTE FUNCTION refuse_turn()"
            )

    yield refuse
    with connection.cursor() as cursor:
        cursor.execute("RESET statement_timeout")
        cursor.execute("DROP TRIGGER IF EXISTS refuse_turn ON agent_turn")
        cursor.execute("DROP FUNCTION IF EXISTS refuse_turn()")


@pytest.mark.parametrize(
    "refusal",
    [
        # 57014: a record whose insert always outlives statement_timeout.
        "PERFORM pg_sleep(30)",
        # 54000, program limit exceeded (as an index row too large would be).
        "RAISE EXCEPTION 'row too big' USING ERRCODE = 'program_limit_exceeded'",
    ],
    ids=["statement_timeout", "program_limit"],
)
def test_a_refusal_psycopg_calls_operational_counts_against_a_spooled_turn(
    settings, tmp_path, refusing_turns, refusal
):
    """psycopg raises both as OperationalError, which used to mean "unreachable": kept for ever."""
    from agent.services import SPOOL_REJECTED, spool_append, spool_replay

    settings.AGENT_SPOOL_ATTEMPTS = 1
    refusing_turns(refusal)
    with connection.cursor() as cursor:
        cursor.execute("SET statement_timeout = '200ms'")
    spool_append(record=spooled_turn(user_message="refused"))

    assert spool_replay() == (0, 0, 0)

    assert not (spool_dir() / SPOOL_NAME).exists()
    assert "refused" in (spool_dir() / SPOOL_REJECTED).read_text()


def test_an_outage_does_not_count_against_a_spooled_turn(settings, tmp_path):
    from agent.services import SPOOL_REJECTED, spool_append, spool_replay

    settings.AGENT_SPOOL_ATTEMPTS = 1  # any refusal would set the turn aside at once
    spool_append(record=spooled_turn())
    outage = DatabaseOutage()
    outage.begin()
    try:
        assert spool_replay() == (0, 0, 1)
        assert spool_replay() == (0, 0, 1)
    finally:
        outage.end()
        connection.close()

    assert spool_replay() == (1, 0, 0)
    assert Turn.objects.get().user_message == "spooled"
    assert not (spool_dir() / SPOOL_REJECTED).exists()


def test_sigterm_saves_the_running_turn_as_interrupted(scripted, tmp_path):
    """A real daphne process, a turn streaming through it, then SIGTERM."""
    scripted.enqueue(text_response(["word "] * 400, delay=0.02))
    # No drain time: the turn is still running when the worker stops (docent/lifecycle.py).
    model = {
        "OPENAI_BASE_URL": scripted.base_url,
        "OPENAI_API_KEY": "test",
        "AGENT_DRAIN_SECONDS": "0",
    }
    with LiveServer(
        "sigterm", database_url(connection.settings_dict["NAME"]), model, tmp_path / "spool"
    ) as server:
        with httpx.Client(base_url=server.url, timeout=10) as client:
            with client.stream(
                "POST",
                "/api/chat",
                json={"content": "Keep talking"},
                headers={"Origin": server.url},
            ) as response:
                lines = response.iter_lines()
                seen = [next(lines) for _ in range(6)]
                assert any('"type":"text"' in line for line in seen)
                returncode = server.stop()
        output = server.output()

    assert returncode == 0, output
    turn = Turn.objects.get()
    assert (turn.status, turn.error_code) == ("interrupted", "unavailable"), output
    assert turn.answer.startswith("word word")
    assert Conversation.objects.count() == 1
