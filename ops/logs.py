"""Structured logs: LOG_FORMAT=json writes one JSON object per line, with the turn's ids.

A running turn binds its turn id, conversation id and trace id in a context variable, so every
line logged while it runs (in its task, its tool threads, its background save) carries them.
"""

import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime

_fields: ContextVar[dict[str, str] | None] = ContextVar("docent_log_fields", default=None)


@contextmanager
def bound(**fields: str) -> Iterator[None]:
    """Add `fields` to every log line written inside the block (empty values are left out)."""
    token = _fields.set({**(_fields.get() or {}), **{k: v for k, v in fields.items() if v}})
    try:
        yield
    finally:
        _fields.reset(token)


def fields() -> dict[str, str]:
    return dict(_fields.get() or {})


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the bound ids, any traceback."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **(_fields.get() or {}),
            **(getattr(record, "turn", None) or {}),  # a turn's summary line: its figures
            **(getattr(record, "fields", None) or {}),  # another line's own (ops.refusals)
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class ContextFormatter(logging.Formatter):
    """The human-readable default, with the turn id and its trace id appended while a turn
    runs (the JSON lines carried the trace id; a text line led to the turn but not to its
    trace: an on-call engineer reading `make run`'s console had no id to open in the viewer)."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        bound_fields = _fields.get() or {}
        if "turn_id" in bound_fields:
            line += f" [turn {bound_fields['turn_id']}]"
        if "trace_id" in bound_fields:  # the admin's search box finds the turn by either
            line += f" [trace {bound_fields['trace_id']}]"
        return line


# The most of a refused request's line kept: the text quotes what the client sent (a Host
# header of up to 16 kB, twice in DisallowedHost's message).
SUSPICIOUS_LINE_CHARS = 300


class SuspiciousRequestFilter(logging.Filter):
    """A request Django refused as suspicious (a foreign Host, a form with too many fields)
    is one short WARNING line, not a traceback at ERROR.

    Django logs each at ERROR with the exception: 30 lines (2.2 kB) per request with a foreign
    Host header, so a client alone decided how fast the error log grew. The client still gets
    its 400; the line says what was refused. Django's line for any other refused request
    ("Not Found: /path") is cut to the same length, and a 4xx's line drops its traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("django.security.") and _suspicious(record.exc_info):
            record.msg, record.args = _cut(record.getMessage()), None
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        elif record.name == "django.request":
            # "Not Found: /path" (any 4xx, and a 5xx's first line) quotes the path as sent, up
            # to Twisted's 16 kB request line: a line of the client's length per request.
            message = record.getMessage()
            if len(message) > SUSPICIOUS_LINE_CHARS:
                record.msg, record.args = _cut(message), None
            if getattr(record, "status_code", 500) < 500:
                # A refusal the site meant (a PermissionDenied: a reviewer who may only view,
                # polling a page's state) came with its traceback, 20 lines of a planned 403.
                record.exc_info, record.exc_text = None, None
        return True


class SaidJobFailureFilter(logging.Filter):
    """procrastinate's ERROR line for a job that gave up, without its traceback when the job
    has said the cause in one line already (an exception marked `docent_said`).

    An embedding endpoint that stayed down is no bug: blog.tasks says so in one ERROR line with
    the article and the cause, and procrastinate's traceback after it (57 lines) said no more.
    Any other exception keeps its traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("procrastinate.") and isinstance(record.exc_info, tuple):
            if getattr(record.exc_info[1], "docent_said", False):
                record.exc_info, record.exc_text = None, None
        return True


class DatabaseDownFilter(logging.Filter):
    """While the database is unreachable, each kind of line about it at most once a minute per
    process, with the count left out since, and in one line: the cause, not its traceback.

    PostgreSQL restarted under `make run` (47 s down) wrote 202 lines: psycopg's pool said each
    reconnection attempt (two lines, one to three a second), and procrastinate's listener and
    the task worker's restart each a 35-line traceback whose last line was "Database error.".
    `docent.health`'s "not ready: database" and "ready again" told the story in two. A
    connection failure is a database connection that could not be made or was cut: the pool's
    attempts, a pool timeout, an OperationalError without SQLSTATE or of class 08 or 57P0x. An
    error inside a query (a timeout, a deadlock) is none and keeps its traceback. The outage
    page's own line (config.outage) stays one per request; Django's "Service Unavailable" after
    it, at ERROR, is left out.
    """

    SAY_EVERY = 60.0

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._said: dict[tuple[str, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(getattr(record, "request", None), "docent_database_down", False):
            return False  # django.request's line for the outage page config.outage said
        cause = _connection_failure(record)
        if cause is None:
            return True
        # A turn's own line (its save retried) is always kept: it names the turn.
        since = 0 if "turn_id" in (_fields.get() or {}) else self._count(record)
        if since is None:
            return False
        # One line: procrastinate's "failed with exception: \n    Database error.\n    ", the
        # pool's "\tIs the server running locally…" began lines of their own.
        message = " ".join(record.getMessage().split())
        if record.exc_info:
            message += f" (database unreachable: {log_text(cause)})"
            record.exc_info, record.exc_text = None, None
        if since:
            message += f" ({since} more like it left out since the last such line)"
        record.msg, record.args = message, None
        return True

    def _count(self, record: logging.LogRecord) -> int | None:
        """None to leave the line out; else how many like it were left out before it."""
        key, now = (record.name, str(record.msg)), time.monotonic()
        with self._lock:
            said_at, since = self._said.get(key, (float("-inf"), 0))
            if now - said_at < self.SAY_EVERY:
                self._said[key] = (said_at, since + 1)
                return None
            self._said[key] = (now, 0)
        return since


_POOL_OUTAGE_LINES = ("error connecting", "discarding closed connection")


def _connection_failure(record: logging.LogRecord) -> str | None:
    """The cause when `record` is about a database connection failing, else None."""
    # The pool's attempts to reconnect, and the pooled connections the outage closed (a line
    # each as they come back: up to the pool's size at once).
    if record.name == "psycopg.pool" and str(record.msg).startswith(_POOL_OUTAGE_LINES):
        return ""
    exc = record.exc_info[1] if isinstance(record.exc_info, tuple) else None
    seen = 0
    while exc is not None and seen < 10:
        if _cut_off(exc):
            return " ".join(str(exc).split()) or type(exc).__name__
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def _cut_off(exc: BaseException) -> bool:
    import psycopg
    from psycopg_pool import PoolTimeout

    if isinstance(exc, PoolTimeout):
        return True
    if not isinstance(exc, psycopg.OperationalError):
        return False
    sqlstate = exc.sqlstate or ""
    return not sqlstate or sqlstate.startswith(("08", "57P0"))


# What begins a new line in a log file or a terminal reading it, or rewrites the one shown:
# control characters (line feed, carriage return, ESC's sequences), the Unicode line and
# paragraph separators (str.splitlines and many log viewers break there), and the format
# characters (bidi overrides reorder a line's words).
_UNSAFE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069]"
)


def log_text(text: str, limit: int = SUSPICIOUS_LINE_CHARS) -> str:
    """`text` for a text log line: at most `limit` characters, each one that could begin a line
    or rewrite it written as its escape (`\\n`, `\\u2028`), the rest as it is.

    A model's tool name or argument names, quoted in a failed call's line, are the visitor's
    to dictate: a line break in them wrote a line of their choosing into the log (a forged
    ERROR for an operator or an alert to act on).
    """
    cut = _cut(text, limit)
    return _UNSAFE.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), cut)


def _cut(message: str, limit: int = SUSPICIOUS_LINE_CHARS) -> str:
    return message[:limit] + "…" if len(message) > limit else message


def _suspicious(exc_info: object) -> bool:
    from django.core.exceptions import SuspiciousOperation  # settings load this module first

    return isinstance(exc_info, tuple) and isinstance(exc_info[1], SuspiciousOperation)
