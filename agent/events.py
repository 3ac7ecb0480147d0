"""Chat protocol events: the one place their shapes are defined (WebSocket and SSE)."""

from __future__ import annotations

import json
from typing import Any

import orjson

from agent.exceptions import AgentError, BadRequest, ConversationFull, ModelError, SharedStateDown
from agent.text import text_scrub

MAX_STEPS = "max_steps"
MODEL_ERROR = "model_error"
BAD_REQUEST = "bad_request"
RATE_LIMITED = "rate_limited"
BUSY = "busy"
CANCELLED = "cancelled"
INTERNAL = "internal"
# This worker is shutting down, or the shared state (Redis) or the database is unreachable:
# reconnect, ask again.
UNAVAILABLE = "unavailable"
ERROR_CODES = frozenset(
    {MAX_STEPS, MODEL_ERROR, BAD_REQUEST, RATE_LIMITED, BUSY, CANCELLED, INTERNAL, UNAVAILABLE}
)
# Codes whose `error` the panel shows with the articles gathered so far (the turn saves them).
LISTS_ARTICLES = frozenset({MAX_STEPS})
# Codes after which the same question may simply be sent again (the panel puts it back).
RETRYABLE = frozenset({MODEL_ERROR, BAD_REQUEST, RATE_LIMITED, BUSY, UNAVAILABLE, INTERNAL})

# Exceptions meant for the program, by event code: the one place they meet.
# A full conversation is a budget spent, as its tokens are: `rate_limited` without a wait.
_CODES: dict[type[AgentError], str] = {
    ModelError: MODEL_ERROR,
    BadRequest: BAD_REQUEST,
    ConversationFull: RATE_LIMITED,
    SharedStateDown: UNAVAILABLE,
}


def error_code(exc: BaseException) -> str:
    """The `error` event code of an exception; anything unexpected is `internal`."""
    return next((code for kind, code in _CODES.items() if isinstance(exc, kind)), INTERNAL)


# Model failures that sending the question again cannot mend: the endpoint refused the site's
# key or does not know its model name (the adapter's `reason`, openai_compat.failure_reason).
# Other 4xx are not: a provider's content filter or context limit refuses one question, and
# the visitor may ask again in other words.
SETUP_FAILURES = frozenset({"auth", "not_found"})


def error_from(exc: AgentError, articles: list[dict] | None = None) -> dict:
    """The terminal `error` event for an agent exception; its message is visitor-safe."""
    return error(error_code(exc), str(exc) or "Something went wrong.", articles, **setup(exc))


def setup(exc: BaseException) -> dict[str, str]:
    """`{"reason": "setup"}` for a model error the site's settings caused (the panel offers no
    retry: the same question meets the same refusal), else nothing."""
    failed_setup = isinstance(exc, ModelError) and exc.reason in SETUP_FAILURES
    return {"reason": "setup"} if failed_setup else {}


def start(conversation_id: str, turn: int, offline: bool) -> dict:
    """First event of a turn; `offline` lets the UI label offline mode. The model's name is
    not sent: it is the operator's (a path, a deployment name) and only the admin shows it."""
    return {"type": "start", "conversation_id": conversation_id, "turn": turn, "offline": offline}


def text(delta: str) -> dict:
    return {"type": "text", "content": delta}


def tool_start(call_id: str, name: str, arguments: dict | str) -> dict:
    return {"type": "tool_start", "call_id": call_id, "name": name, "arguments": arguments}


def tool_end(
    call_id: str, name: str, ok: bool, duration_ms: float, summary: str, executed: bool = True
) -> dict:
    """A tool call's end; a call that never ran (the step limit, the per-step cap) is marked
    `"executed": false`, as the transcript marks it."""
    event = {
        "type": "tool_end",
        "call_id": call_id,
        "name": name,
        "ok": ok,
        "duration_ms": round(duration_ms, 1),
        "summary": summary,
    }
    if not executed:
        event["executed"] = False
    return event


def citation(
    article_id: int | str, title: str, url: str, excerpt: str = "", section_url: str = ""
) -> dict:
    """A cited article; from a search hit it also carries the passage and its section's url."""
    event = {"type": "citation", "article_id": article_id, "title": title, "url": url}
    if excerpt:
        event["excerpt"] = excerpt
    if section_url:
        event["section_url"] = section_url
    return event


def done(conversation_id: str, steps: int, usage: dict, answered: bool = False) -> dict:
    """Terminal event of a successful turn; usage has input, output and total tokens.

    `answered` is false when the turn declined or cited nothing (`agent.answered`).
    """
    return {
        "type": "done",
        "conversation_id": conversation_id,
        "steps": steps,
        "usage": usage,
        "answered": answered,
    }


def feedback_saved(turn: int) -> dict:
    """The answer to a visitor's `feedback` frame."""
    return {"type": "feedback_saved", "turn": turn}


def error(code: str, message: str, articles: list[dict] | None = None, **extra: Any) -> dict:
    """Terminal event of a failed turn; `extra` carries e.g. retry_after."""
    if code not in ERROR_CODES:
        raise ValueError(f"unknown error code {code!r}")
    return {"type": "error", "code": code, "message": message, "articles": articles or [], **extra}


def database_unavailable() -> dict:
    """The `error` refusing a message whose session or turn could not be written. It was
    `internal`, which the panel words "Something went wrong on our side": nothing is broken
    but the database's reach, and `unavailable` says so and offers to ask again."""
    message = "The assistant cannot reach its database right now. Please try again."
    return error(UNAVAILABLE, message)


def refused(code: str, message: str) -> dict:
    """An `error` answering one frame (a second question, a bad frame, a Stop with nothing to
    stop), not ending a turn: marked so a client does not read it as an answer's end."""
    return {**error(code, message), "refused": True}


def encode(event: dict) -> bytes:
    """One event as compact UTF-8 JSON; orjson, as the encoding is most of a frame's CPU."""
    try:
        return orjson.dumps(event, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:  # what orjson refuses (an integer over 64 bits in a tool's arguments)
        # Or a lone surrogate that slipped past the edges: UTF-8 cannot carry it, and a frame
        # that fails to encode ends a turn without its last event.
        return json.dumps(text_scrub(event), ensure_ascii=False, separators=(",", ":")).encode()


def sse_encode(event: dict) -> bytes:
    """Encode one event as a Server-Sent Events frame."""
    return b"data: " + encode(event) + b"\n\n"
