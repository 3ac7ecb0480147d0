"""No turn lost: a turn's row exists from its start, its text is checkpointed while it streams,
and a recovery pass marks the turns of a process that died as `interrupted`, keeping their text.

Each web process writes the text of all its running turns in one statement every
AGENT_CHECKPOINT_SECONDS, and renews its lease in the same trip. A turn whose process has not
renewed for AGENT_LEASE_SECONDS belongs to a dead process (kill -9, a lost machine).
"""

import asyncio
import logging
import os
import socket
import uuid
import weakref
from datetime import datetime, timedelta
from typing import NamedTuple

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from agent.exceptions import SharedStateDown
from agent.loop import TurnResult
from agent.models import Conversation, Turn, WorkerLease
from agent.ratelimit import budget_holds_renew
from agent.small_talk import is_small_talk

logger = logging.getLogger(__name__)

# host:pid:random, so a restarted process with a recycled pid is still another worker.
WORKER_NAME = f"{socket.gethostname()[:60]}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def turn_start(
    *, turn_id: str, conversation: Conversation, index: int, user_message: str, page: str
) -> None:
    """Record a turn as `running`, with its question, when it starts (one INSERT)."""
    Turn.objects.create(
        id=turn_id,
        conversation=conversation,
        index=index,
        user_message=user_message.replace("\x00", "\ufffd"),
        small_talk=is_small_talk(user_message),
        status=Turn.Status.RUNNING,
        page=page,
        started_at=timezone.now(),
        worker=WORKER_NAME,
    )


def turns_checkpoint(*, texts: list[tuple[str, str]], worker: str) -> None:
    """Write the text so far of running turns and renew the worker's lease, in one trip."""
    ids = [turn_id for turn_id, _ in texts]
    answers = [text.replace("\x00", "\ufffd") for _, text in texts]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO agent_workerlease (name, renewed_at) VALUES (%s, now()) "
            "ON CONFLICT (name) DO UPDATE SET renewed_at = now()",
            [worker],
        )
        if ids:
            cursor.execute(
                "UPDATE agent_turn SET answer = v.answer, checkpointed_at = now() "
                "FROM unnest(%s::uuid[], %s::text[]) AS v(id, answer) "
                "WHERE agent_turn.id = v.id AND agent_turn.status = 'running'",
                [ids, answers],
            )


class RecoveredTurn(NamedTuple):
    turn_id: str
    conversation_id: str
    worker: str  # host:pid:... of the process that stopped renewing its lease


def turns_recover(*, lease_seconds: float, now: datetime | None = None) -> list[RecoveredTurn]:
    """Mark `interrupted` the running turns whose process stopped renewing its lease.

    Returns:
        The turns marked, so each can be logged with its ids (a count leads nowhere).
    """
    cutoff = (now or timezone.now()) - timedelta(seconds=lease_seconds)
    alive = WorkerLease.objects.filter(renewed_at__gte=cutoff).values("name")
    with transaction.atomic():
        # Locked, so the rows read are the rows marked; one being saved right now is skipped
        # (it is finishing, and the next run looks again).
        stale = (
            Turn.objects.select_for_update(skip_locked=True)
            .filter(status=Turn.Status.RUNNING, started_at__lt=cutoff)
            .exclude(worker__in=alive)
            .values_list("pk", "conversation_id", "worker")
        )
        found = [
            RecoveredTurn(str(pk), str(conversation), worker) for pk, conversation, worker in stale
        ]
        Turn.objects.filter(pk__in=[turn.turn_id for turn in found]).update(
            status="interrupted",
            error_code="unavailable",
            error="The worker running this turn stopped before it finished.",
        )
        WorkerLease.objects.filter(renewed_at__lt=cutoff - timedelta(hours=1)).delete()
    return found


class Checkpointer:
    """Checkpoints the running turns of this process from one background task per event loop."""

    def __init__(self) -> None:
        self._turns: dict[str, TurnResult] = {}
        self._written: dict[str, int] = {}
        self._tasks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def track(self, turn_id: str, result: TurnResult) -> None:
        self._turns[turn_id] = result
        self._written[turn_id] = len(result.answer)
        loop = asyncio.get_running_loop()
        task = self._tasks.get(loop)
        if task is None or task.done():
            self._tasks[loop] = loop.create_task(self._run(), name="turn-checkpoints")

    def forget(self, turn_id: str) -> None:
        self._turns.pop(turn_id, None)
        self._written.pop(turn_id, None)

    async def tick(self) -> None:
        """Write what changed since the last tick (and renew the lease)."""
        texts = []
        for turn_id, result in list(self._turns.items()):
            text = result.text_so_far()
            if len(text) != self._written.get(turn_id):
                texts.append((turn_id, text))
        await database_sync_to_async(turns_checkpoint, thread_sensitive=False)(
            texts=texts, worker=WORKER_NAME
        )
        for turn_id, text in texts:
            if turn_id in self._written:
                self._written[turn_id] = len(text)

    async def _run(self) -> None:
        # Ends when no turn runs here, so an idle process (or a finished test) holds no task.
        await self._tick_safely()  # at once: the lease exists from the first turn on
        while self._turns:
            await asyncio.sleep(settings.AGENT_CHECKPOINT_SECONDS)
            await self._tick_safely()

    async def _tick_safely(self) -> None:
        try:
            await self.tick()
        except DatabaseError as exc:  # the final save retries and spools; this is best effort
            logger.warning("checkpointing running turns failed: %s", exc)
        await self._holds_renew()

    async def _holds_renew(self) -> None:
        """What each running turn has spent so far, on its hold record, and its lease renewed:
        recovery settles a dead worker's holds to it (agent.ratelimit.budget_holds_recover).
        Apart from the database's checkpoint, so one store down does not stop the other."""
        spent = {turn_id: result.spent_so_far() for turn_id, result in self._turns.items()}
        try:
            await budget_holds_renew(spent=spent)
        except SharedStateDown:  # said by agent.shared; the turn's own settlement is exact
            pass
        except Exception:  # noqa: BLE001 - best effort, as the checkpoint is
            logger.exception("recording the running turns' spending failed")
