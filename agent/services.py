"""Writes for the assistant: conversations, saved turns, and the spool that loses nothing."""

import fcntl
import json
import logging
import os
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agent.models import Conversation, ToolCall, Turn

logger = logging.getLogger(__name__)

SPOOL_NAME = "turns.jsonl"


@dataclass
class TurnRecord:
    """Everything saved about one turn; plain data, so it can wait in the spool as JSON."""

    turn_id: str
    conversation_id: str
    session_key: str
    index: int
    user_message: str
    status: str
    started_at: str
    page: str = ""
    answer: str = ""
    step_count: int = 0
    model: str = ""
    offline: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    time_to_first_token_ms: float | None = None
    duration_ms: float = 0.0
    error_code: str = ""
    error: str = ""
    citations: list[dict] = field(default_factory=list)
    no_answer: bool = False
    tool_calls: list[dict] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, default=str)

    @classmethod
    def from_json(cls, line: str) -> "TurnRecord":
        return cls(**json.loads(line))


def conversation_start(
    *, conversation_id: uuid.UUID | None, session_key: str, page: str
) -> Conversation:
    """Return the visitor's conversation, creating it when no id is given.

    Raises:
        Conversation.DoesNotExist: the id is unknown or belongs to another session.
    """
    if conversation_id is None:
        return Conversation.objects.create(session_key=session_key, page=page)
    return Conversation.objects.get(pk=conversation_id, session_key=session_key)


@transaction.atomic
def turn_record(*, record: TurnRecord) -> bool:
    """Save a finished turn with its tool calls, once.

    Returns:
        False when the turn was already saved (a retry or a replay), True when written now.
    """
    if Turn.objects.filter(pk=record.turn_id).exists():
        return False
    conversation, _ = Conversation.objects.get_or_create(
        pk=record.conversation_id, defaults={"session_key": record.session_key, "page": record.page}
    )
    turn = Turn.objects.create(
        id=record.turn_id,
        conversation=conversation,
        index=record.index,
        user_message=record.user_message,
        answer=record.answer,
        status=record.status,
        step_count=record.step_count,
        model=record.model,
        offline=record.offline,
        input_tokens=record.input_tokens,
        output_tokens=record.output_tokens,
        time_to_first_token_ms=record.time_to_first_token_ms,
        duration_ms=record.duration_ms,
        error_code=record.error_code,
        error=record.error,
        citations=record.citations,
        no_answer=record.no_answer,
        page=record.page,
        started_at=datetime.fromisoformat(record.started_at),
    )
    ToolCall.objects.bulk_create(
        ToolCall(
            turn=turn,
            step=call["step"],
            call_id=call["call_id"],
            name=call["name"],
            arguments=call["arguments"],
            result=call["result"],
            ok=call["ok"],
            error=call["error"],
            executed=call["executed"],
            started_at=datetime.fromisoformat(call["started_at"]),
            duration_ms=call["duration_ms"],
        )
        for call in record.tool_calls
    )
    Conversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now())
    return True


def spool_dir() -> Path:
    return Path(settings.AGENT_SPOOL_DIR)


def spool_append(*, record: TurnRecord) -> Path:
    """Append a turn that could not be saved to the spool file (locked: several workers)."""
    directory = spool_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / SPOOL_NAME
    with path.open("a", encoding="utf-8") as spool:
        fcntl.flock(spool, fcntl.LOCK_EX)
        spool.write(record.to_json() + "\n")
        spool.flush()
        os.fsync(spool.fileno())
    return path


def spool_replay() -> tuple[int, int, int]:
    """Save every spooled turn; keep the ones that still fail in the spool.

    The spool is renamed before reading, so turns spooled meanwhile go to a fresh file and a
    concurrent replay finds nothing to do; saving is idempotent, so a crash mid-replay is safe.

    Returns:
        (saved, already_saved, still_failing) counts.
    """
    path = spool_dir() / SPOOL_NAME
    if not path.exists():
        return 0, 0, 0
    claimed = path.with_name(f"{SPOOL_NAME}.replaying-{os.getpid()}")
    try:
        path.rename(claimed)
    except FileNotFoundError:
        return 0, 0, 0
    saved = skipped = failed = 0
    for line in claimed.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = TurnRecord.from_json(line)
        try:
            written = turn_record(record=record)
        except Exception:
            logger.exception("replaying turn %s failed; kept in the spool", record.turn_id)
            spool_append(record=record)
            failed += 1
            continue
        saved += written
        skipped += not written
    claimed.unlink()
    return saved, skipped, failed
