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
from django.db.models import Q
from django.utils import timezone

from agent.exceptions import SharedStateDown
from agent.holders import SPACE, process_gone
from agent.loop import TurnResult
from agent.models import Conversation, Turn, WorkerLease
from agent.ratelimit import budget_holds_renew
from agent.small_talk import is_small_talk
from agent.tokens import TextCount

logger = logging.getLogger(__name__)

# host:pid:random, so a restarted process with a recycled pid is still another worker, then
# the process's space (agent.holders), so a process of the same space can tell it was killed.
WORKER_NAME = f"{socket.gethostname()[:60]}:{os.getpid()}:{uuid.uuid4().hex[:6]}" + (
    f":{SPACE}" if SPACE else ""
)


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


def turns_checkpoint(
    *,
    texts: list[tuple[str, str]],
    worker: str,
    tokens: dict[str, tuple[int, int]] | None = None,
    traces: dict[str, tuple[str, str]] | None = None,
) -> None:
    """Write the text so far of running turns, their (input, output) tokens spent so far and
    their (trace id, root span id) when given, and renew the worker's lease, in one trip."""
    answers = {turn_id: text.replace("\x00", "\ufffd") for turn_id, text in texts}
    tokens, traces = tokens or {}, traces or {}
    ids = list(answers | tokens | traces)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO agent_workerlease (name, renewed_at) VALUES (%s, now()) "
            "ON CONFLICT (name) DO UPDATE SET renewed_at = now()",
            [worker],
        )
        if ids:  # one statement for both; a NULL leaves its column as it was
            cursor.execute(
                "UPDATE agent_turn SET answer = coalesce(v.answer, agent_turn.answer), "
                "input_tokens = coalesce(v.input, agent_turn.input_tokens), "
                "output_tokens = coalesce(v.output, agent_turn.output_tokens), "
                "trace_id = coalesce(v.trace, agent_turn.trace_id), "
                "root_span_id = coalesce(v.span, agent_turn.root_span_id), "
                "checkpointed_at = now() "
                "FROM unnest(%s::uuid[], %s::text[], %s::int[], %s::int[], %s::text[], "
                "%s::text[]) AS v(id, answer, input, output, trace, span) "
                "WHERE agent_turn.id = v.id AND agent_turn.status = 'running'",
                [
                    ids,
                    [answers.get(i) for i in ids],
                    [tokens[i][0] if i in tokens else None for i in ids],
                    [tokens[i][1] if i in tokens else None for i in ids],
                    [traces[i][0] if i in traces else None for i in ids],
                    [traces[i][1] if i in traces else None for i in ids],
                ],
            )


def tokens_so_far(result: TurnResult) -> tuple[int, int]:
    """A running turn's (input, output) tokens, the call in flight included: what its hold
    record says it spent (TurnResult.spent_so_far), split so. The call in flight is one figure
    in the loop (its prompt and what it wrote); its text so far is counted as its output."""
    in_flight = result.spent_so_far() - result.usage.total
    written = TextCount().add("".join(result.streaming)).tokens if result.streaming else 0
    output = min(in_flight, written)
    return result.usage.input_tokens + in_flight - output, result.usage.output_tokens + output


class RecoveredTurn(NamedTuple):
    turn_id: str
    conversation_id: str
    worker: str  # host:pid:... of the process that stopped renewing its lease
    trace_id: str = ""  # written by its first checkpoint, when tracing was on
    root_span_id: str = ""  # its root span's id, written with its trace id
    gone: bool = False  # its process is known gone (this space), not only its lease lapsed


def turns_recover(*, lease_seconds: float, now: datetime | None = None) -> list[RecoveredTurn]:
    """Mark `interrupted` the running turns whose process stopped renewing its lease.

    Returns:
        The turns marked, so each can be logged with its ids (a count leads nowhere).
    """
    cutoff = (now or timezone.now()) - timedelta(seconds=lease_seconds)
    alive = WorkerLease.objects.filter(renewed_at__gte=cutoff).values("name")
    running = Turn.objects.filter(status=Turn.Status.RUNNING)
    # A process of this space that is gone is known dead now: its turns read "running" for
    # 30-45 s more, until its lease lapsed, though its lock was already taken off (holders).
    workers = running.order_by().values_list("worker", flat=True).distinct()
    gone = [name for name in workers if worker_gone(name)]
    with transaction.atomic():
        # Locked, so the rows read are the rows marked; one being saved right now is skipped
        # (it is finishing, and the next run looks again).
        lapsed = Q(started_at__lt=cutoff) & ~Q(worker__in=alive)
        stale = (
            Turn.objects.select_for_update(skip_locked=True)
            .filter(lapsed | Q(worker__in=gone), status=Turn.Status.RUNNING)
            .values_list("pk", "conversation_id", "worker", "trace_id", "root_span_id")
        )
        found = [
            RecoveredTurn(str(pk), str(conversation), worker, trace, span, gone=worker in gone)
            for pk, conversation, worker, trace, span in stale
        ]
        Turn.objects.filter(pk__in=[turn.turn_id for turn in found]).update(
            status="interrupted",
            error_code="unavailable",
            error="The worker running this turn stopped before it finished.",
        )
        WorkerLease.objects.filter(renewed_at__lt=cutoff - timedelta(hours=1)).delete()
    return found


def worker_gone(name: str) -> bool:
    """True only when the process `name` (a WORKER_NAME) was of this space and no longer runs."""
    parts = name.split(":")
    return len(parts) == 4 and process_gone(space=parts[3], pid=parts[1])


class Checkpointer:
    """Checkpoints the running turns of this process from one background task per event loop."""

    def __init__(self) -> None:
        self._turns: dict[str, TurnResult] = {}
        self._written: dict[str, int] = {}
        self._tokens: dict[str, tuple[int, int]] = {}  # as last written, by turn id
        # Trace ids not written yet: the final save wrote a turn's, so a turn whose worker was
        # killed kept none and the admin had no trace to show for the answer cut halfway.
        self._traces: dict[str, tuple[str, str]] = {}  # (trace id, root span id)
        self._tasks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def track(
        self, turn_id: str, result: TurnResult, trace_id: str = "", root_span_id: str = ""
    ) -> None:
        self._turns[turn_id] = result
        self._written[turn_id] = len(result.answer)
        if trace_id:
            self._traces[turn_id] = (trace_id, root_span_id)
        loop = asyncio.get_running_loop()
        task = self._tasks.get(loop)
        if task is None or task.done():
            self._tasks[loop] = loop.create_task(self._run(), name="turn-checkpoints")

    def forget(self, turn_id: str) -> None:
        self._turns.pop(turn_id, None)
        self._written.pop(turn_id, None)
        self._tokens.pop(turn_id, None)
        self._traces.pop(turn_id, None)

    async def tick(self, spent: dict[str, tuple[int, int]] | None = None) -> None:
        """Write what changed since the last tick (and renew the lease): the text, and the
        tokens (`spent`, else counted now). A turn whose worker is killed keeps them: it was
        recorded with none, where its hold was settled to what it had spent (1,443)."""
        spent = self._spent() if spent is None else spent
        texts = []
        for turn_id, result in list(self._turns.items()):
            text = result.text_so_far()
            if len(text) != self._written.get(turn_id):
                texts.append((turn_id, text))
        tokens = {i: t for i, t in spent.items() if t != self._tokens.get(i) and i in self._turns}
        traces = dict(self._traces)
        await database_sync_to_async(turns_checkpoint, thread_sensitive=False)(
            texts=texts, worker=WORKER_NAME, tokens=tokens, traces=traces
        )
        for turn_id in traces:
            self._traces.pop(turn_id, None)
        for turn_id, text in texts:
            if turn_id in self._written:
                self._written[turn_id] = len(text)
        for turn_id, figures in tokens.items():
            if turn_id in self._turns:
                self._tokens[turn_id] = figures

    def _spent(self) -> dict[str, tuple[int, int]]:
        return {turn_id: tokens_so_far(result) for turn_id, result in self._turns.items()}

    async def _run(self) -> None:
        # Ends when no turn runs here, so an idle process (or a finished test) holds no task.
        await self._tick_safely()  # at once: the lease exists from the first turn on
        while self._turns:
            await asyncio.sleep(settings.AGENT_CHECKPOINT_SECONDS)
            await self._tick_safely()

    async def _tick_safely(self) -> None:
        # One count for both stores: the row then says what recovery settles the hold to.
        spent = self._spent()
        try:
            await self.tick(spent)
        except DatabaseError as exc:  # the final save retries and spools; this is best effort
            logger.warning("checkpointing running turns failed: %s", exc)
        await self._holds_renew(spent)

    async def _holds_renew(self, spent: dict[str, tuple[int, int]]) -> None:
        """What each running turn has spent so far, on its hold record, and its lease renewed:
        recovery settles a dead worker's holds to it (agent.ratelimit.budget_holds_recover).
        Apart from the database's checkpoint, so one store down does not stop the other."""
        totals = {i: sum(figures) for i, figures in spent.items() if i in self._turns}
        try:
            await budget_holds_renew(spent=totals)
        except SharedStateDown:  # said by agent.shared; the turn's own settlement is exact
            pass
        except Exception:  # noqa: BLE001 - best effort, as the checkpoint is
            logger.exception("recording the running turns' spending failed")
