"""The turn runner, in process: what a turn holds is given back however early it ends."""

import asyncio
import gc
import threading

import pytest
from channels.db import database_sync_to_async

from agent import ratelimit
from agent.runner import ChatMessage, TurnRunner, Visitor
from agent.shared import state
from testing_support.model_server import text_response

ADDRESS = "203.0.113.5"
# Sessions waiting for the table this test locks (pg_locks is the whole server's).
WAITERS = (
    "SELECT count(*) FROM pg_locks WHERE NOT granted AND database = "
    "(SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND relation = 'agent_conversation'::regclass"
)


def held(client_ip: str) -> int:
    """Tokens on the address's budget for today (LocalState, the single-process store)."""
    budgets = ratelimit._budgets(conversation_id=None, client_ip=client_ip)
    return state()._get(budgets[0][0])


@pytest.mark.django_db(transaction=True)
async def test_a_turn_cancelled_while_waiting_for_the_database_gives_back_its_hold(settings):
    """A socket closed right after its message cancels the turn between its budget hold and
    its row (the turn waits for the database thread, busy with other visitors). The hold used
    to stay spent for the day, on the address's budget and on the site's."""
    settings.AGENT_TOKENS_PER_IP_PER_DAY = settings.AGENT_TOKENS_RESERVE  # room for one hold
    gate = threading.Event()
    busy = asyncio.ensure_future(database_sync_to_async(gate.wait)())  # the thread is taken
    events: list[dict] = []

    async def emit(event: dict) -> None:
        events.append(event)

    turn = asyncio.create_task(
        TurnRunner().run(
            message=ChatMessage(content="What is pgvector?"),
            visitor=Visitor(session_key="a" * 32, client_ip=ADDRESS),
            emit=emit,
        )
    )
    while held(ADDRESS) == 0:  # the turn has taken its hold and waits for the thread
        await asyncio.sleep(0.01)
    turn.cancel()
    gate.set()
    await asyncio.gather(turn, busy, return_exceptions=True)

    assert turn.cancelled() and events == []
    assert held(ADDRESS) == 0
    # The address's whole day is still there for its next question.
    again = await ratelimit.budget_reserve(conversation_id=None, client_ip=ADDRESS)
    assert isinstance(again, ratelimit.TurnBudget)


class ConversationLock(threading.Thread):
    """Holds agent_conversation locked on its own connection (`locked`) until `release` is
    set, and sets `waiting` once another connection (the turn's, in turn_prepare) waits for it."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.locked = threading.Event()
        self.waiting = threading.Event()
        self.release = threading.Event()

    def run(self) -> None:
        from django.db import connection, transaction

        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("LOCK TABLE agent_conversation IN SHARE ROW EXCLUSIVE MODE")
                self.locked.set()
                while not self.waiting.is_set():
                    cursor.execute(WAITERS)
                    if cursor.fetchone()[0]:
                        self.waiting.set()
                self.release.wait()
        finally:
            connection.close()


@pytest.mark.django_db(transaction=True)
async def test_a_turn_cut_by_the_drain_while_its_row_is_written_is_saved_before_shutdown_ends():
    """The drain cancels a turn whose row the database thread is still writing. The row is
    saved once the thread is done; shutdown returned before that (the saver had nothing
    queued yet), so the process exited with the row `running`, and it said `cancelled`
    although the visitor was told `unavailable`."""
    from agent.models import Turn

    runner = TurnRunner()
    lock = ConversationLock()
    lock.start()
    await asyncio.to_thread(lock.locked.wait)  # before the turn, or it ends before the lock
    events: list[dict] = []

    async def emit(event: dict) -> None:
        events.append(event)

    turn = asyncio.create_task(
        runner.run(
            message=ChatMessage(content="What is pgvector?"),
            visitor=Visitor(session_key="b" * 32, client_ip=ADDRESS),
            emit=emit,
        )
    )
    await asyncio.to_thread(lock.waiting.wait)  # turn_prepare waits to write the conversation
    shutdown = asyncio.create_task(runner.shutdown(drain=0, timeout=60))
    await asyncio.wait([turn])  # cut by the drain; its row is not written yet
    lock.release.set()  # the thread now writes the conversation and the turn's row
    await shutdown

    saved = await database_sync_to_async(lambda: list(Turn.objects.values("status")))()
    assert saved == [{"status": "interrupted"}]
    assert [event.get("code") for event in events] == ["unavailable"]
    await asyncio.to_thread(lock.join)


@pytest.mark.django_db(transaction=True)
async def test_a_turn_whose_record_cannot_be_built_gives_back_its_conversation(monkeypatch):
    """A record that could not be built left the conversation held, renewed by its heartbeat
    for as long as the process lived: every later message got "busy". The adapter now refuses
    the endpoint replies that caused it, so the fault is injected here."""
    from agent.turns import TurnContext

    def unsavable(self, result):
        raise ValueError("a reply the record cannot hold")

    monkeypatch.setattr(TurnContext, "record", unsavable)
    events: list[dict] = []

    async def emit(event: dict) -> None:
        events.append(event)

    await TurnRunner().run(
        message=ChatMessage(content="What is pgvector?"),
        visitor=Visitor(session_key="c" * 32, client_ip=ADDRESS),
        emit=emit,
    )
    conversation = events[0]["conversation_id"]
    assert events[-1]["type"] == "error" and events[-1]["code"] == "internal"
    for _ in range(100):  # the release runs as its own task
        if not await state().held(f"turns:c:{conversation}"):
            break
        await asyncio.sleep(0.01)

    assert await state().held(f"turns:c:{conversation}") == ""
    assert not state().slots.get(f"turns:s:{'c' * 32}")


async def _read_all(model) -> None:
    async for _ in model.stream([{"role": "user", "content": "hi"}], None):
        pass


async def test_a_replaced_or_shut_down_model_client_closes_its_aiohttp_session(
    scripted, settings, caplog
):
    """The runner keeps one OpenAI client per event loop. One replaced (the settings changed)
    or still cached at shutdown was left to the garbage collector with its aiohttp session
    open: `ERROR asyncio: Unclosed client session` in the log."""
    scripted.enqueue(text_response(["one"]), text_response(["two"]))
    runner = TurnRunner()
    first = runner.model()
    await _read_all(first)  # the session is opened by the first request
    settings.AGENT_MODEL = "another-model"
    second = runner.model()
    assert second is not first
    await _read_all(second)

    await runner.shutdown(drain=0)
    del first, second
    gc.collect()

    assert "Unclosed client session" not in caplog.text
