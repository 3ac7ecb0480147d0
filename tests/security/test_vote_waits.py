"""A vote whose save waits holds up nothing: not its socket's next frames, nor other sockets.

The consumer awaited a vote's save before reading the socket's next frame, so a Stop sent right
after a vote stopped nothing until the save was done: up to 5 s while the answer voted on was
still being saved, and for as long as a row lock lasted (an answer's own save, the admin), the
answer streaming on, charged, all along. And the save ran on the process's one database thread,
where Channels closes old connections before every frame of every socket: one waiting vote held
every socket of the process. Made for real: another connection holds the voted turn's row lock.
"""

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator

import psycopg
import pytest
from channels.db import database_sync_to_async
from django.db import connection

from agent.models import Turn
from testing_support.live_server import database_url
from testing_support.model_server import text_response
from tests.security.clients import ws_answer, ws_ask, ws_events, ws_first, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)


@contextlib.contextmanager
def row_locked(conversation_id: str) -> Iterator[psycopg.Connection]:
    """The conversation's turn rows locked FOR UPDATE by another connection, until the end."""
    with psycopg.connect(database_url(connection.settings_dict["NAME"])) as holder:
        holder.execute(
            "SELECT id FROM agent_turn WHERE conversation_id = %s FOR UPDATE", [conversation_id]
        )
        yield holder  # the transaction stays open: the rows stay locked
        holder.rollback()


def lock_waiters(holder: psycopg.Connection) -> int:
    """Backends waiting for a lock that `holder`'s backend holds."""
    with psycopg.connect(database_url(connection.settings_dict["NAME"]), autocommit=True) as look:
        row = look.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
            [holder.info.backend_pid],
        ).fetchone()
    return row[0]


async def turn_finished(conversation_id: str) -> None:
    """Wait until the answer's record has landed (the vote is on a finished answer)."""
    finished = database_sync_to_async(
        lambda: (
            Turn.objects.filter(conversation_id=conversation_id)
            .exclude(status=Turn.Status.RUNNING)
            .exists()
        )
    )
    for _ in range(100):
        if await finished():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the first answer was never saved")


async def test_a_stop_right_after_a_waiting_vote_acts_at_once(serve, scripted):
    scripted.enqueue(text_response(["A first answer."]))
    scripted.enqueue(text_response(["and on "] * 600, delay=0.05))  # 30 s unless stopped
    scripted.enqueue(text_response(["Another visitor's answer."]))
    server = serve("vote-waits", **model_env(scripted))
    socket = await ws_open(server)
    first = await ws_ask(socket, "A question")
    conversation_id = first[0]["conversation_id"]
    await turn_finished(conversation_id)
    vote = {"type": "feedback", "conversation_id": conversation_id, "turn": 1, "vote": "up"}

    with row_locked(conversation_id) as holder:
        await socket.send(json.dumps({"type": "message", "content": "Go on"}))
        assert (await ws_first(socket))["type"] == "start"
        await socket.send(json.dumps(vote))
        for _ in range(100):  # the vote's save is waiting for the lock now
            if await asyncio.to_thread(lock_waiters, holder):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the vote never waited for the row lock")

        sent = time.monotonic()
        await socket.send(json.dumps({"type": "stop"}))
        stopped = await ws_events(socket, timeout=10)  # before: not until the lock went
        stop_took = time.monotonic() - sent
        # Another visitor of the same process is answered meanwhile.
        other = await ws_answer(server, "Hello?")
        assert await asyncio.to_thread(lock_waiters, holder) == 1  # the vote still waits

    assert stopped[-1]["code"] == "cancelled", stopped[-1]
    assert stop_took < 2, stop_took
    assert other[-1]["type"] == "done", other[-1]
    # The lock gone, the vote is saved and answered.
    assert await ws_first(socket, timeout=10) == {"type": "feedback_saved", "turn": 1}
    saved = await database_sync_to_async(Turn.objects.get)(conversation_id=conversation_id, index=1)
    assert saved.vote == "up"
    await socket.close()
