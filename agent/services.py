"""Writes for the assistant: conversations, saved turns, and the spool that loses nothing."""

import contextlib
import fcntl
import json
import logging
import os
import stat
import tempfile
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TextIO

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from agent.answered import turn_answered
from agent.completion import tool_call_row, turn_complete_running
from agent.exceptions import BadRequest
from agent.models import Conversation, ToolCall, Turn
from agent.small_talk import is_small_talk
from agent.text import text_scrub
from config.sessions import session_digest
from ops.metrics import feedback_vote_count, turn_spool_rejected_count

logger = logging.getLogger(__name__)

SPOOL_NAME = "turns.jsonl"
SPOOL_REJECTED = "turns.rejected.jsonl"  # lines replay gave up on, kept for a person to read
SPOOL_FAILURES = "spool_failures"  # a spooled line's count of failed replays


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
    estimated_tokens: int = 0  # of input + output, charged on an estimate (no usage reported)
    time_to_first_token_ms: float | None = None
    duration_ms: float = 0.0
    error_code: str = ""
    error: str = ""
    citations: list[dict] = field(default_factory=list)
    listed_articles: list[dict] = field(default_factory=list)
    answered: bool = False
    index_incomplete: bool = False  # set by the saver (agent/saving.py) before the first try
    tool_calls: list[dict] = field(default_factory=list)
    trace_id: str = ""  # the turn's OpenTelemetry trace, when tracing is on

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, default=str)

    @classmethod
    def from_json(cls, line: str) -> "TurnRecord":
        data = json.loads(line)
        data.pop(SPOOL_FAILURES, None)
        if "no_answer" in data:  # spooled before `answered` replaced it
            del data["no_answer"]
            data["answered"] = turn_answered(
                status=data["status"], answer=data["answer"], citations=data["citations"]
            )
        return cls(**data)


def conversation_start(
    *, conversation_id: uuid.UUID | None, session_key: str, page: str, turns: int = 0
) -> Conversation:
    """Return the visitor's conversation, creating it when no id is given (with `turns` turn
    numbers already claimed).

    Raises:
        Conversation.DoesNotExist: the id is unknown or belongs to another session.
    """
    if conversation_id is None:
        return Conversation.objects.create(session_key=session_key, page=page, turns_started=turns)
    return Conversation.objects.owned(session_key).get(pk=conversation_id)


def conversation_hide(*, conversation_id: uuid.UUID, session_key: str) -> bool:
    """Delete the conversation from its reader's panel; False when it is not theirs (or gone).

    Hidden, not deleted: admins review every conversation (DESIGN), and the unanswered page and
    dashboard count its turns. For the reader it is gone: it cannot be restored, continued or
    voted on from their session again.
    """
    hidden = Conversation.objects.owned(session_key).filter(pk=conversation_id)
    return hidden.update(hidden_at=timezone.now()) == 1


def turn_index_claim(*, conversation: Conversation) -> int:
    """Claim the next turn number; atomic across workers (the counter is updated in SQL)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE agent_conversation SET turns_started = turns_started + 1 "
            "WHERE id = %s RETURNING turns_started",
            [conversation.pk],
        )
        return cursor.fetchone()[0]


def turn_record(*, record: TurnRecord) -> bool:
    """Complete a turn with its tool calls, once (its row exists from its start, or not).

    Returns:
        False when the turn was already completed (a retry or a replay), True when written now.
    """
    # The usual case, the row recorded at the turn's start and still running, in one statement.
    return turn_complete_running(record=record) or _turn_record_any(record=record)


@transaction.atomic
def _turn_record_any(*, record: TurnRecord) -> bool:
    existing = Turn.objects.select_for_update().filter(pk=record.turn_id).first()
    # `interrupted` by the recovery pass may still be completed by the real record, later.
    if existing is not None and existing.status not in (Turn.Status.RUNNING, "interrupted"):
        return False
    conversation, _ = Conversation.objects.get_or_create(
        pk=record.conversation_id,
        # A turn spooled before digests holds the cookie's key itself: kept as its digest.
        defaults={"session_key": session_digest(record.session_key), "page": record.page},
    )
    fields = dict(
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
        estimated_tokens=record.estimated_tokens,
        time_to_first_token_ms=record.time_to_first_token_ms,
        duration_ms=record.duration_ms,
        error_code=record.error_code,
        error=record.error,
        citations=record.citations,
        listed_articles=record.listed_articles,
        answered=record.answered,
        small_talk=is_small_talk(record.user_message),
        index_incomplete=record.index_incomplete,
        page=record.page,
        started_at=datetime.fromisoformat(record.started_at),
        trace_id=record.trace_id,
    )
    turn, _ = Turn.objects.update_or_create(id=record.turn_id, defaults=fields)
    ToolCall.objects.filter(turn=turn).delete()
    ToolCall.objects.bulk_create(tool_call_row(str(turn.pk), call) for call in record.tool_calls)
    Conversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now())
    return True


def spool_dir() -> Path:
    return Path(settings.AGENT_SPOOL_DIR)


def spool_append(*, record: TurnRecord) -> Path | None:
    """Append a turn that could not be saved to the spool file (locked: several workers).

    Never raises: text UTF-8 cannot encode is replaced (and logged), and a spool that cannot
    be written is logged with the turn, the last place it can still be read from.
    """
    line = record.to_json()
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        logger.error(
            "turn %s has text UTF-8 cannot encode; spooled with it replaced", record.turn_id
        )
        line = json.dumps(text_scrub(asdict(record)), ensure_ascii=False, default=str)
    try:
        return _spool_write(line)
    except Exception:
        logger.exception("turn %s could not be spooled; its record: %s", record.turn_id, line)
        return None


# A spooled turn carries the visitor's session key (the cookie itself: a signed-in editor's
# is their admin session) with the question and answer. Written with the umask, the file was
# readable by every local user (0644), who could sign in as that editor.
SPOOL_FILE_MODE = 0o600
SPOOL_DIR_MODE = 0o700  # a directory the spool makes; one that exists keeps its mode


def _spool_open(path: Path) -> TextIO:
    """`path` opened to append, readable and writable by its owner only, whenever made."""
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, SPOOL_FILE_MODE)
    if stat.S_IMODE(os.fstat(descriptor).st_mode) & ~SPOOL_FILE_MODE:
        # A file an older version wrote. One owned by another user (a shared spool we may
        # write) keeps its mode: the turn is still written, never lost over a chmod.
        with contextlib.suppress(PermissionError):
            os.fchmod(descriptor, SPOOL_FILE_MODE)
    return os.fdopen(descriptor, "a", encoding="utf-8")


def _spool_write(line: str, name: str = SPOOL_NAME) -> Path:
    directory = spool_dir()
    directory.mkdir(mode=SPOOL_DIR_MODE, parents=True, exist_ok=True)
    path = directory / name
    while True:
        with _spool_open(path) as spool:
            fcntl.flock(spool, fcntl.LOCK_EX)
            # A replay may have renamed the file between our open and our lock: write to the
            # current spool, never into a file that is being (or was) replayed.
            if not path.exists() or os.fstat(spool.fileno()).st_ino != path.stat().st_ino:
                continue
            spool.write(line + "\n")
            spool.flush()
            os.fsync(spool.fileno())
            return path


def spool_writable() -> bool:
    """Whether a byte can be written to the spool's directory now (a probe file, removed).

    Asked before the database fails, when the spool is the only copy a turn would have.
    """
    return not spool_unwritable_reason()


def spool_unwritable_reason() -> str:
    """Why the spool's directory cannot take a byte now ('' when it can)."""
    directory = spool_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory) as probe:
            probe.write(b"\n")  # a full disk refuses this (no fsync: scraped every 15 s)
            probe.flush()
    except OSError as exc:
        return f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
    return ""


def spool_waiting() -> int:
    """Turns in this host's spool waiting to be saved (its file and any being replayed)."""
    directory = spool_dir()
    files = [directory / SPOOL_NAME, *directory.glob(f"{SPOOL_NAME}.replaying-*")]
    return sum(_lines(path) for path in files)


def _lines(path: Path) -> int:
    try:
        with path.open("rb") as spool:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: spool.read(1 << 16), b""))
    except FileNotFoundError:  # none spooled, or replayed (renamed) as we looked
        return 0


def spool_replay() -> tuple[int, int, int]:
    """Save every spooled turn; keep the ones that still fail in the spool.

    The spool is renamed, then locked, before reading: turns spooled meanwhile go to a fresh
    file and a concurrent replay finds nothing to do. A replay that died mid-way left its
    claimed file behind; it is picked up here. Saving is idempotent, so nothing is doubled.

    Returns:
        (saved, already_saved, still_failing) counts.
    """
    totals = [0, 0, 0]
    for claimed in _spool_claim():
        for index, count in enumerate(_spool_replay_file(claimed)):
            totals[index] += count
    return totals[0], totals[1], totals[2]


def _spool_claim() -> list[Path]:
    import psutil

    directory = spool_dir()
    claimed = [
        orphan
        for orphan in directory.glob(f"{SPOOL_NAME}.replaying-*")
        if not psutil.pid_exists(int(orphan.name.rsplit("-", 1)[1]))
    ]
    path = directory / SPOOL_NAME
    mine = path.with_name(f"{SPOOL_NAME}.replaying-{os.getpid()}")
    try:
        path.rename(mine)
        claimed.append(mine)
    except FileNotFoundError:
        pass
    return claimed


def _spool_replay_file(claimed: Path) -> tuple[int, int, int]:
    saved = skipped = failed = 0
    with claimed.open(encoding="utf-8") as spool:
        fcntl.flock(spool, fcntl.LOCK_EX)  # a writer that opened it before the rename finishes
        lines = spool.read().splitlines()
    for line in filter(str.strip, lines):
        try:
            record = TurnRecord.from_json(line)
            written = turn_record(record=record)
        except Exception as exc:
            failed += _spool_keep_or_reject(line, exc)
            continue
        saved += written
        skipped += not written
    claimed.unlink()
    return saved, skipped, failed


def _spool_keep_or_reject(line: str, exc: Exception) -> bool:
    """Put a line that failed back in the spool, or set it aside once it is plainly unsaveable.

    A database that cannot be reached says nothing about the turn, so that failure is not
    counted: an outage of any length loses nothing. Any other failure (a record the database
    refuses, a line that is not JSON) would fail the same way every 15 s for ever; after
    AGENT_SPOOL_ATTEMPTS of them the line moves to the rejected file for a person to read.
    Returns True when the line stays in the spool.
    """
    try:
        data = json.loads(line)
    except ValueError:
        data = None
    if _database_unreachable(exc) and isinstance(data, dict):
        logger.warning("replaying spooled turn %s failed (%s); it stays", data.get("turn_id"), exc)
        _spool_write(line)
        return True
    failures = (data.get(SPOOL_FAILURES, 0) + 1) if isinstance(data, dict) else None
    if failures is not None and failures < settings.AGENT_SPOOL_ATTEMPTS:
        logger.warning(
            "replaying a spooled turn failed (%d so far); it stays", failures, exc_info=exc
        )
        _spool_write(json.dumps({**data, SPOOL_FAILURES: failures}, ensure_ascii=False))
        return True
    turn_id = data.get("turn_id") if isinstance(data, dict) else None
    path = _spool_write(line, name=SPOOL_REJECTED)
    logger.error(
        "spooled turn %s could not be saved (%s attempts); set aside in %s",
        turn_id,
        failures or 1,
        path,
        exc_info=exc,
    )
    turn_spool_rejected_count()
    return False


# psycopg raises OperationalError both for "no server to talk to" and for refusals of this
# very record (a statement timeout, a program limit), so the SQLSTATE decides. Not counted:
# no SQLSTATE (no answer at all), connection exceptions (08), insufficient resources (53: a
# full disk or too many connections passes and says nothing about the turn), transaction
# rollbacks (40: a deadlock or serialization failure, worth another try) and shutdowns.
_TRANSIENT_CLASSES = frozenset({"08", "40", "53"})
_TRANSIENT_STATES = frozenset({"57P01", "57P02", "57P03", "55P03"})


def _database_unreachable(exc: Exception) -> bool:
    """True when a failed save says nothing about the record: the database could not take it."""
    if not isinstance(exc, OperationalError | InterfaceError):
        return False
    sqlstate = getattr(exc.__cause__, "sqlstate", None)
    if sqlstate is None:
        return True
    return sqlstate[:2] in _TRANSIENT_CLASSES or sqlstate in _TRANSIENT_STATES


FEEDBACK_NOT_FOUND = "No such answer in your conversations."


@transaction.atomic
def turn_feedback_set(
    *, conversation_id: uuid.UUID, session_key: str, index: int, vote: str, comment: str
) -> Turn:
    """Record the visitor's vote on one of their finished answers; `vote=""` clears it.

    One vote per turn: a new vote replaces the old one, with its comment.

    Raises:
        BadRequest: no finished turn `index` in a conversation of this session (another
            session's conversation is treated as unknown).
    """
    turn = (
        Turn.objects.select_for_update()
        .filter(
            conversation__in=Conversation.objects.owned(session_key).filter(pk=conversation_id),
            index=index,
        )
        .exclude(status=Turn.Status.RUNNING)
        .order_by("-started_at")
        .first()
    )
    if turn is None:
        raise BadRequest(FEEDBACK_NOT_FOUND)
    turn.vote = vote
    turn.feedback_comment = comment if vote else ""
    turn.feedback_at = timezone.now() if vote else None
    turn.save(update_fields=["vote", "feedback_comment", "feedback_at"])
    # Counted once the row is written, whichever way the vote came (socket, SSE, REST).
    transaction.on_commit(lambda: feedback_vote_count(vote=vote or "none"))
    return turn
