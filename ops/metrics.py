"""Every Prometheus metric Docent exports, defined once (docs/operations.md, "Operating Docent").

With PROMETHEUS_MULTIPROC_DIR set (several worker processes), prometheus-client keeps each
process's values in files in that directory and /metrics adds them up; see ops/multiproc.py.
Gauges use `livesum`: the sum over processes that are alive, so a dead worker's open sockets
do not linger.
"""

from prometheus_client import Counter, Gauge, Histogram

from ops import multiproc
from ops.refusals import refusal_note

# Unlabelled metrics open their files as they are defined below: the directory comes first.
multiproc.directory_ensure()

# Labels are closed sets written here, never text from visitors or the model (cardinality).
TURNS = Counter("docent_turns", "Chat turns that ended, by final status.", ["status"])
FIRST_TOKEN = Histogram(
    "docent_turn_first_token_seconds",
    "From the turn's start to its first streamed text.",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60),
)
TURN_DURATION = Histogram(
    "docent_turn_duration_seconds",
    "From the turn's start to its final event.",
    buckets=(0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120),
)
TURN_ERRORS = Counter(
    "docent_turn_errors",
    "Turns that ended `error`, by the error code the visitor got (model_error, internal, ...).",
    ["code"],
)
TURNS_ANSWERED = Counter(
    "docent_turns_answered",
    "Turns that ended `done`, by whether they were answered (cited an article, did not decline).",
    ["answered"],
)
MODEL_CALLS = Counter("docent_model_calls", "Model calls (one per step), by outcome.", ["outcome"])
MODEL_ERRORS = Counter(
    "docent_model_errors",
    "Model calls that failed, by what failed (timeout, deadline, connection, rate_limited, auth, "
    "not_found, http_4xx, http_5xx, bad_response, stream_error, broke_off, no_result).",
    ["reason"],
)
MODEL_RETRIES = Counter(
    "docent_model_retries",
    "Model requests tried again inside one call (before any output), by what failed.",
    ["reason"],
)
MODEL_DURATION = Histogram(
    "docent_model_call_seconds",
    "One model call, from the request to the end of its stream (retries included), by outcome.",
    ["outcome"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60),
)
TOOL_CALLS = Counter(
    "docent_tool_calls", "Executed tool calls, by tool and outcome.", ["tool", "outcome"]
)
TOOL_DURATION = Histogram(
    "docent_tool_duration_seconds",
    "Time a tool call took, validation and timeout included.",
    ["tool"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
TOKENS = Counter(
    "docent_model_tokens",
    "Tokens the model read (input) and wrote (output): as the endpoint reported them, or the "
    "estimate the budget was charged when it reported none (a stopped or cut stream).",
    ["direction"],
)
# The part of those no endpoint reported: a cut call's charge was indistinguishable from a
# report, so a spike of Stops read as the model growing verbose.
TOKENS_ESTIMATED = Counter(
    "docent_model_tokens_estimated",
    "Of docent_model_tokens, those the budget charged on an estimate because the endpoint "
    "reported no usage (a stopped or cut stream).",
    ["direction"],
)
ACTIVE_STREAMS = Gauge(
    "docent_active_streams", "Turns streaming right now.", multiprocess_mode="livesum"
)
OPEN_SOCKETS = Gauge(
    "docent_open_sockets", "Chat WebSockets open right now.", multiprocess_mode="livesum"
)
REFUSALS = Counter(
    "docent_rate_limit_refusals",
    "Requests refused by a rate limit, a token budget or a conversation's length, by reason.",
    ["reason"],
)
INDEXING_JOBS = Counter(
    "docent_indexing_jobs", "Article indexing jobs that ran, by outcome.", ["outcome"]
)
SAVE_RETRIES = Counter("docent_turn_save_retries", "Turn saves that failed and were tried again.")
TURNS_SPOOLED = Counter(
    "docent_turns_spooled",
    "Turns written to the spool because the database refused every save attempt.",
)
TURNS_LOST = Counter(
    "docent_turns_lost",
    "Turns neither saved nor spooled: the database refused every save attempt and the spool "
    "(AGENT_SPOOL_DIR) could not be written (disk full, read-only, wrong owner).",
)
TURNS_SPOOL_REJECTED = Counter(
    "docent_turns_spool_rejected",
    "Spooled turns that replay gave up on (set aside in the spool's rejected file).",
)
FEEDBACK_VOTES = Counter(
    "docent_feedback_votes", "Visitor votes saved on answers (none: a vote taken back).", ["vote"]
)

SEARCHES = Counter(
    "docent_searches",
    "The assistant's knowledge-base searches, by whether any hit cleared the relevance bar.",
    ["outcome"],
)
SEARCH_TOP_RELEVANCE = Histogram(
    "docent_search_top_relevance",
    "Calibrated relevance (0-1) of the best hit of each assistant search that found one.",
    buckets=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
)
DRAINING = Gauge(
    "docent_draining",
    "Web processes draining for a shutdown (refusing new turns), over all live workers.",
    multiprocess_mode="livesum",
)
TURNS_REFUSED = Counter(
    "docent_turns_refused",
    "Messages refused before a turn started, for reasons other than rate limits (draining: "
    "the process is shutting down; busy: one turn per conversation or session; address: "
    "AGENT_TURNS_PER_IP turns run from the client's address already; database: "
    "the session or the turn's row could not be written; shared_state: Redis, where the "
    "limits and turn locks live, could not be reached).",
    ["reason"],
)
TURNS_RECOVERED = Counter(
    "docent_turns_recovered",
    "Running turns of a worker that died, marked interrupted by the recovery job.",
)

TASK_WORKER_RESTARTS = Counter(
    "docent_task_worker_restarts",
    "Times the task worker stopped (its database connection died) and was started again.",
)

TASK_WORKERS_LOST = Counter(
    "docent_task_workers_lost",
    "Task workers that died without stopping (kill -9, out of memory, a lost host), found by "
    "the stalled-job check once their heartbeat was silent for TASK_WORKER_STALLED_SECONDS.",
)

LOOP_LAG = Histogram(
    "docent_event_loop_lag_seconds",
    "How much later than asked a web process's event loop ran a 0.25 s timer (ops/loop_lag.py).",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
# liveall: one series per live process, labelled with its pid (which one is stuck). Labelled, so
# that a process that never runs the timer (the task worker, a command) writes no 0 for it.
LOOP_LAST_TICK = Gauge(
    "docent_event_loop_last_tick_timestamp_seconds",
    "When a web process's event loop last ran its lag timer (Unix time; old: stuck now).",
    ["process"],
    multiprocess_mode="liveall",
)

UNKNOWN_TOOL = "unknown"
_children: dict[tuple, object] = {}


def child(metric, *labels: str):
    """`metric.labels(*labels)`, kept: labels() takes a lock and builds a key on every call.

    Bounded, since every label value is from a closed set (see the comment above).
    """
    key = (id(metric), labels)
    found = _children.get(key)
    if found is None:
        found = _children[key] = metric.labels(*labels)
    return found


def turn_endings_zeroed(*, statuses: list[str], error_codes: list[str]) -> None:
    """Every way a turn ends, or is refused, exported at 0 from the start.

    A labelled counter had no series until its first event: a new operator's alert on
    `rate(docent_turn_errors_total[5m])` read "no data" (is it wired?), and the first error
    was no increase at all to rate() and increase(), the series appearing at 1 (walk 24).
    """
    for status in statuses:
        child(TURNS, status)
    for code in error_codes:
        child(TURN_ERRORS, code)
    for answered in ("true", "false"):
        child(TURNS_ANSWERED, answered)
    for reason in ("draining", "busy", "address", "database", "shared_state"):
        child(TURNS_REFUSED, reason)
    for outcome in ("hits", "empty"):
        child(SEARCHES, outcome)
    for vote in ("up", "down", "none"):
        child(FEEDBACK_VOTES, vote)


def turn_observe(
    *, status: str, first_token_ms: float | None, duration_ms: float, error_code: str = ""
) -> None:
    """Count one finished turn and its timings, and a failed turn's error code."""
    child(TURNS, status).inc()
    if status == "error":
        # model_error is the endpoint's fault, internal ours: the status alone cannot say which.
        child(TURN_ERRORS, error_code or "internal").inc()
    if first_token_ms is not None:
        FIRST_TOKEN.observe(first_token_ms / 1000)
    TURN_DURATION.observe(duration_ms / 1000)


def refusal_count(*, reason: str, address: str = "") -> None:
    """Count a refusal; with the client's `address`, also the throttled line that names it."""
    child(REFUSALS, reason).inc()
    if address:
        refusal_note(reason=reason, address=address)


def indexing_job_count(*, ok: bool) -> None:
    child(INDEXING_JOBS, "ok" if ok else "error").inc()


def save_retry_count() -> None:
    SAVE_RETRIES.inc()


def turn_spooled_count() -> None:
    TURNS_SPOOLED.inc()


def turn_lost_count() -> None:
    TURNS_LOST.inc()


def turn_spool_rejected_count() -> None:
    TURNS_SPOOL_REJECTED.inc()


def feedback_vote_count(*, vote: str) -> None:
    child(FEEDBACK_VOTES, vote).inc()


def model_retry_count(*, reason: str) -> None:
    child(MODEL_RETRIES, reason).inc()


def search_observe(*, top_relevance: float | None) -> None:
    """One assistant search: its best hit's relevance, or none cleared the bar."""
    child(SEARCHES, "empty" if top_relevance is None else "hits").inc()
    if top_relevance is not None:
        SEARCH_TOP_RELEVANCE.observe(top_relevance)


def turn_refused_count(*, reason: str) -> None:
    child(TURNS_REFUSED, reason).inc()


def turns_recovered_count(*, count: int) -> None:
    if count:
        TURNS_RECOVERED.inc(count)
        child(TURNS, "interrupted").inc(count)


def task_worker_restart_count() -> None:
    TASK_WORKER_RESTARTS.inc()


def task_workers_lost_count(count: int) -> None:
    if count:
        TASK_WORKERS_LOST.inc(count)
