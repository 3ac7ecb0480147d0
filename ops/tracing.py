"""OpenTelemetry traces, only when OTEL_EXPORTER_OTLP_ENDPOINT is set.

Nothing here imports OpenTelemetry at module level: with the variable unset the SDK is never
imported (tested in a subprocess). The exporter is OTLP over HTTP/protobuf and reads the
standard OTEL_EXPORTER_OTLP_* variables itself (endpoint, headers, timeout, compression).
Span and attribute names follow the OpenTelemetry GenAI semantic conventions.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from contextvars import ContextVar, Token
from typing import Any

logger = logging.getLogger(__name__)

_UNSET = object()
_tracer: Any = _UNSET
_lock = threading.Lock()
AGENT_NAME = "docent"


def tracer() -> Any | None:
    """The process's tracer, built on first use; None when tracing is off or unavailable."""
    global _tracer
    if _tracer is _UNSET:
        with _lock:
            if _tracer is _UNSET:
                _tracer = _tracer_from_settings()
    return _tracer


def reset(value: Any = _UNSET) -> None:
    """Forget the tracer (tests and benches install their own)."""
    global _tracer
    _tracer = value


def tracer_build(exporter: Any, *, batch: bool = True) -> Any:
    """A tracer of a new provider that sends every span to `exporter`."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "docent")})
    provider = TracerProvider(resource=resource)
    processor = BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter)
    provider.add_span_processor(processor)
    return provider.get_tracer("docent")


def _tracer_from_settings() -> Any | None:
    from django.conf import settings

    if not settings.OTEL_EXPORTER_OTLP_ENDPOINT:
        return None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        logger.warning(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set but opentelemetry-exporter-otlp-proto-http is "
            "not installed; traces are off"
        )
        return None
    return tracer_build(OTLPSpanExporter())


def root() -> Any:
    """An empty context: a span started in it begins a new trace."""
    from opentelemetry.context import Context

    return Context()


def span_id_hex(span: Any) -> str:
    """The span's id as 16 hex digits."""
    return format(span.get_span_context().span_id, "016x")


def trace_id_hex(span: Any) -> str:
    """The span's trace id as the 32 hex digits that trace viewers show."""
    return format(span.get_span_context().trace_id, "032x")


@contextlib.contextmanager
def current(span: Any) -> Iterator[None]:
    """Make `span` the parent of spans started inside the block (same task or thread)."""
    from opentelemetry import trace

    with trace.use_span(span, end_on_exit=False):
        yield


def embedding_span(*, model: str, local: bool) -> contextlib.AbstractContextManager:
    """A CLIENT span around embedding a visitor's query, a child of the current span.

    Its time includes waiting for the local engine, which indexing may be using: a search
    that took seconds while the database answered in milliseconds shows where they went.
    """
    active = tracer()
    if active is None:
        return contextlib.nullcontext()
    from opentelemetry.trace import SpanKind

    attributes = {
        "gen_ai.operation.name": "embeddings",
        "gen_ai.provider.name": "docent_local" if local else "openai",
        "gen_ai.request.model": model,
    }
    return active.start_as_current_span(
        f"embeddings {model}", kind=SpanKind.CLIENT, attributes=attributes
    )


def turn_save_span(*, turn_id: str) -> contextlib.AbstractContextManager:
    """A span around saving a finished turn (every attempt), a child of the turn's root span.

    The save runs after the visitor's final event, so it ends after its parent: the trace
    shows what the turn cost the database and whether it had to be retried or spooled.
    """
    active = tracer()
    if active is None:
        return contextlib.nullcontext()
    attributes = {"docent.turn.id": turn_id, "db.system.name": "postgresql"}
    return active.start_as_current_span("save_turn", attributes=attributes)


def turn_recovered_span(
    *, trace_id: str, turn_id: str, conversation_id: str, worker: str, root_span_id: str = ""
) -> None:
    """One span in a killed turn's own trace: it was recovered as `interrupted`, and whose
    process stopped renewing its lease.

    A turn's root span ends, and is exported, only by the process that runs it: killed
    mid-answer, it never exported it. This span's parent is that root span (`root_span_id`,
    checkpointed with the trace id), never received (viewers mark it a missing parent), so
    the recovery hangs under the same root as the spans the turn had exported before it
    died (a finished tool call, an earlier model call): one tree, followed across the crash.
    A made-up parent id split the trace into two unrelated pieces.
    """
    active = tracer()
    if active is None or len(trace_id) != 32:
        return
    import random

    from opentelemetry import trace
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    try:
        parent_id = int(root_span_id, 16) if len(root_span_id) == 16 else 0
    except ValueError:
        parent_id = 0
    lost_root = SpanContext(
        trace_id=int(trace_id, 16),
        # A turn of before the root span's id was kept: any id, the trace is still the turn's.
        span_id=parent_id or random.getrandbits(64) or 1,  # noqa: S311 - an id, not a secret
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    attributes = {
        "docent.turn.id": turn_id,
        "gen_ai.conversation.id": conversation_id,
        "docent.turn.status": "interrupted",
        "docent.turn.worker": worker,
    }
    parent = trace.set_span_in_context(NonRecordingSpan(lost_root))
    span = active.start_span("recover_turn", context=parent, attributes=attributes)
    span_failed(span, "interrupted")
    span.end()


def span_note(span: Any, **attributes: Any) -> None:
    """Set attributes on a span that may be None (tracing off)."""
    if span is not None:
        for key, value in attributes.items():
            span.set_attribute(key, value)


def span_failed(span: Any, error_type: str) -> None:
    """Mark a span failed, with `error.type` from a closed set (a reason, not a message)."""
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, error_type))


@contextlib.contextmanager
def statements_span(sqls: list[str]) -> Iterator[Any]:
    """A CLIENT span around statements sent on a raw psycopg cursor, a child of the current span.

    Django's execute wrapper (`db_spans`) never sees such cursors: the search's pipelined round
    trip and its side statement had no span, so a slow search's time went unexplained. Several
    statements are one batch span (they share one round trip, so only their sum is timed).
    Yields the span (None when tracing is off) for `statement_rows`.
    """
    span = statement_span_start(sqls)
    try:
        yield span
    except Exception as exc:
        if span is not None:
            span_failed(span, type(exc).__qualname__)
        raise
    finally:
        if span is not None:
            span.end()


def statement_span_start(sqls: list[str]) -> Any | None:
    """The span of `statements_span`, started now and ended by the caller (a statement sent
    now and read later); None when tracing is off."""
    active = tracer()
    if active is None:
        return None
    from django.db import connection
    from opentelemetry.trace import SpanKind

    operations = {_operation(sql) for sql in sqls}
    if len(sqls) == 1:
        operation = operations.pop()
    else:  # the semantic conventions' name for a batch: "BATCH SELECT", or "BATCH" when mixed
        operation = f"BATCH {operations.pop()}" if len(operations) == 1 else "BATCH"
    database = connection.settings_dict["NAME"]
    attributes = {
        "db.system.name": "postgresql",
        "db.namespace": database,
        "db.operation.name": operation,
        "db.query.text": ";\n".join(sqls),  # placeholders, never the values
    }
    if len(sqls) > 1:
        attributes["db.operation.batch.size"] = len(sqls)
    return active.start_span(f"{operation} {database}", kind=SpanKind.CLIENT, attributes=attributes)


def statement_rows(span: Any, rows: int) -> None:
    """Note how many rows the statements returned (a span that may be None)."""
    if span is not None:
        span.set_attribute("db.response.returned_rows", rows)


def _operation(sql: str) -> str:
    # A UNION of parenthesized SELECTs (the search's vector lists) is a SELECT too.
    return (sql.lstrip("( \n").split(None, 1) or ["QUERY"])[0].upper()


def db_spans() -> contextlib.AbstractContextManager:
    """Database spans for every query run in the block, children of the current span.

    For sync code in the thread Django uses for it (the tool's `sync_to_async` thread
    inherits the caller's context, so the spans nest under the tool call).
    """
    active = tracer()
    if active is None:
        return contextlib.nullcontext()
    from django.db import connection

    return connection.execute_wrapper(_DatabaseSpans(active, connection.settings_dict["NAME"]))


class _DatabaseSpans:
    """A Django execute wrapper: one CLIENT span per statement, named by its operation."""

    def __init__(self, active: Any, database: str) -> None:
        self.tracer, self.database = active, database

    def __call__(self, execute, sql, params, many, context):
        from opentelemetry.trace import SpanKind, Status, StatusCode

        operation = _operation(sql)
        attributes = {
            "db.system.name": "postgresql",
            "db.namespace": self.database,
            "db.operation.name": operation,
            # The text has placeholders, never the values (a visitor's question is a value).
            "db.query.text": sql,
        }
        with self.tracer.start_as_current_span(
            f"{operation} {self.database}", kind=SpanKind.CLIENT, attributes=attributes,
            record_exception=False, set_status_on_exception=False,
        ) as span:  # fmt: skip
            try:
                return execute(sql, params, many, context)
            except Exception as exc:
                span.set_status(Status(StatusCode.ERROR))
                span.set_attribute("error.type", type(exc).__qualname__)
                raise


class ChatRetries:
    """The retries inside one model call, for its `chat {model}` span: how many, and how much
    of the call's time went to attempts given up and to the waits between them."""

    def __init__(self, span: Any) -> None:
        self.span = span
        self.count = 0
        self.backoff_ms = 0.0
        self.failed_ms = 0.0

    def note(self, *, reason: str, attempt_ms: float, backoff_s: float) -> None:
        self.count += 1
        self.backoff_ms += backoff_s * 1000
        self.failed_ms += attempt_ms
        self.span.add_event(
            "docent.model.retry",
            {
                "docent.retry.number": self.count,
                "error.type": reason,
                "docent.retry.attempt_ms": round(attempt_ms, 1),
                "docent.retry.backoff_ms": round(backoff_s * 1000, 1),
            },
        )

    def close(self) -> None:
        """The totals, set on the span before it ends (only when there was a retry)."""
        if self.count:
            self.span.set_attribute("docent.model.retries", self.count)
            self.span.set_attribute("docent.model.retry_backoff_ms", round(self.backoff_ms, 1))
            self.span.set_attribute("docent.model.failed_attempts_ms", round(self.failed_ms, 1))


# The model call whose span is open in this task: the adapter's retry loop runs inside it (the
# stream is iterated in the loop's task) but knows nothing of spans.
_chat_retries: ContextVar[ChatRetries | None] = ContextVar("docent_chat_retries", default=None)


def chat_retries_begin(span: Any) -> tuple[ChatRetries, Token]:
    retries = ChatRetries(span)
    return retries, _chat_retries.set(retries)


def chat_retries_end(retries: ChatRetries, token: Token) -> None:
    _chat_retries.reset(token)
    retries.close()


def chat_retry_note(*, reason: str, attempt_ms: float, backoff_s: float) -> None:
    """A retry inside the current model call: an event on its span (nothing with tracing off)."""
    retries = _chat_retries.get()
    if retries is not None:
        retries.note(reason=reason, attempt_ms=attempt_ms, backoff_s=backoff_s)
