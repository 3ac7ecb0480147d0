"""Saving turns in the background: after the last event, retried, spooled if the database is down.

This is Django's answer to `waitUntil`: the visitor already has the final event when the save
starts, the save is a tracked task (so shutdown can wait for it), and a save that keeps failing
goes to a spool file that `manage.py replay_spool` (and start-up) write back later.
"""

import asyncio
import contextvars
import logging
from collections.abc import Awaitable
from functools import partial
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import DatabaseError

from agent.exceptions import SharedStateDown
from agent.services import TurnRecord, spool_append, spool_dir, spool_replay, turn_record
from blog.selectors import article_index_incomplete
from ops import metrics, tracing

logger = logging.getLogger(__name__)


async def _index_incomplete() -> bool:
    """Whether some published article is still unsearchable as the turn is saved.

    Asked here, in the background, rather than in the turn's first INSERT, where it added
    about 8 ms to the time to first token. The turn ended a moment ago, so this is the index
    its searches saw, unless an indexing job finished during the turn.
    """
    try:
        return await database_sync_to_async(article_index_incomplete, thread_sensitive=False)()
    except DatabaseError:
        return False  # the save will fail too and be spooled; the flag is only a hint


def _record(record: TurnRecord) -> None:
    """`turn_record`, its statements traced as children of the save's span (tracing on)."""
    with tracing.db_spans():
        turn_record(record=record)


class TurnSaver:
    """Tracks the save tasks of one process."""

    backoff = 0.2  # seconds before the first retry, doubled each time
    replay_every = 15.0  # seconds between attempts to replay the spool

    def __init__(self) -> None:
        self._pending: set[asyncio.Task] = set()
        self._by_conversation: dict[str, asyncio.Task] = {}
        self._replayer: asyncio.Task | None = None

    def schedule(self, record: TurnRecord, first: Awaitable | None = None) -> asyncio.Task:
        """Save a turn in the background, after `first` (quick bookkeeping such as the budget).

        The next turn of the conversation waits for this task, so it sees both.
        """
        task = asyncio.create_task(self._save(record, first), name=f"save-turn-{record.turn_id}")
        self._pending.add(task)
        self._by_conversation[record.conversation_id] = task
        task.add_done_callback(partial(self._forget, conversation_id=record.conversation_id))
        return task

    async def wait_for_conversation(self, conversation_id: str, timeout: float = 5.0) -> None:
        """Let the previous turn's save (and budget) land before the next turn checks and reads."""
        task = self._by_conversation.get(conversation_id)
        if task is not None and not task.done():
            await asyncio.wait([task], timeout=timeout)

    async def drain(self, timeout: float = 30.0) -> bool:
        """Wait for every pending save; True when none is left."""
        pending = [task for task in self._pending if not task.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout)
        return all(task.done() for task in pending)

    @property
    def pending(self) -> int:
        return sum(not task.done() for task in self._pending)

    async def _save(self, record: TurnRecord, first: Awaitable | None) -> None:
        if first is not None:
            try:
                await first
            except SharedStateDown:
                # Said once by agent.shared; the turn is saved all the same, its budgets not
                # settled (what it spent is not charged) and its lock left to expire.
                pass
            except Exception:
                logger.exception("bookkeeping for turn %s failed", record.turn_id)
        with tracing.turn_save_span(turn_id=record.turn_id) as span:
            if await self._attempts(record, span):
                return
            path = await asyncio.to_thread(spool_append, record=record)
            if path is None:
                # Neither saved nor spooled: said apart from a spooled turn, which a replay
                # saves; this one is only in spool_append's ERROR line, with its record.
                metrics.turn_lost_count()
                if span is not None:
                    tracing.span_failed(span, "lost")
                logger.error(
                    "turn %s lost: the database refused every save and the spool %s could not "
                    "be written; its record is in the log line before",
                    record.turn_id,
                    spool_dir(),
                )
                return
            if span is not None:
                tracing.span_failed(span, "spooled")
        metrics.turn_spooled_count()
        logger.error(
            "turn %s spooled to %s; replayed when the database is back", record.turn_id, path
        )
        self._replay_soon()

    async def _attempts(self, record: TurnRecord, span: Any) -> bool:
        """Try to save the turn AGENT_SAVE_RETRIES times; False when every attempt failed."""
        record.index_incomplete = await _index_incomplete()
        attempts = max(1, settings.AGENT_SAVE_RETRIES)
        for attempt in range(attempts):
            tracing.span_note(span, **{"docent.save.attempts": attempt + 1})
            try:
                # Not thread-sensitive: a slow save must not queue the next turn's reads behind it
                # on the process's one database thread. Each save is one atomic function.
                await database_sync_to_async(_record, thread_sensitive=False)(record)
                return True
            except Exception as exc:
                logger.warning(
                    "saving turn %s failed (attempt %d/%d): %s",
                    record.turn_id,
                    attempt + 1,
                    attempts,
                    exc,
                )
                if attempt + 1 < attempts:
                    metrics.save_retry_count()
                    await asyncio.sleep(self.backoff * 2**attempt)
        return False

    def _replay_soon(self) -> None:
        """Replay this host's spool once the database is back: a web pod may be the only
        process that can see its own disk (the task worker drains its own host's spool)."""
        if self._replayer is None or self._replayer.done():
            # Not a pending save: shutdown does not wait for it (the spool is on disk). In a
            # context of its own: it replays every spooled turn, so its lines must not carry
            # the ids (and trace) of the one turn whose save happened to start it.
            self._replayer = asyncio.create_task(
                self._replay_until_empty(), name="spool-replay", context=contextvars.Context()
            )

    async def _replay_until_empty(self) -> None:
        while True:
            await asyncio.sleep(self.replay_every)
            try:
                saved, _, failed = await asyncio.to_thread(spool_replay)
            except Exception:  # noqa: BLE001 - the database is still down: try again later
                logger.warning("replaying the spool failed; retrying in %.0f s", self.replay_every)
                continue
            if saved or failed:  # the "spooled" ERROR line's sequel: were they saved?
                logger.info("spool replayed: %d turns saved, %d still failing", saved, failed)
            if not failed:
                return

    def _forget(self, task: asyncio.Task, conversation_id: str | None = None) -> None:
        self._pending.discard(task)
        if conversation_id and self._by_conversation.get(conversation_id) is task:
            del self._by_conversation[conversation_id]
