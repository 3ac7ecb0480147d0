"""Chat protocol events: the one place their shapes are defined (WebSocket and SSE)."""

from __future__ import annotations

import json
from typing import Any

import orjson

MAX_STEPS = "max_steps"
MODEL_ERROR = "model_error"
BAD_REQUEST = "bad_request"
RATE_LIMITED = "rate_limited"
BUSY = "busy"
CANCELLED = "cancelled"
INTERNAL = "internal"
UNAVAILABLE = "unavailable"  # this worker is shutting down: reconnect and ask again
ERROR_CODES = frozenset(
    {MAX_STEPS, MODEL_ERROR, BAD_REQUEST, RATE_LIMITED, BUSY, CANCELLED, INTERNAL, UNAVAILABLE}
)


def start(conversation_id: str, turn: int, model: str, offline: bool) -> dict:
    """First event of a turn; `model` and `offline` let the UI label offline mode."""
    return {
        "type": "start",
        "conversation_id": conversation_id,
        "turn": turn,
        "model": model,
        "offline": offline,
    }


def text(delta: str) -> dict:
    return {"type": "text", "content": delta}


def tool_start(call_id: str, name: str, arguments: dict | str) -> dict:
    return {"type": "tool_start", "call_id": call_id, "name": name, "arguments": arguments}


def tool_end(call_id: str, name: str, ok: bool, duration_ms: float, summary: str) -> dict:
    return {
        "type": "tool_end",
        "call_id": call_id,
        "name": name,
        "ok": ok,
        "duration_ms": round(duration_ms, 1),
        "summary": summary,
    }


def citation(article_id: int | str, title: str, url: str) -> dict:
    return {"type": "citation", "article_id": article_id, "title": title, "url": url}


def done(conversation_id: str, steps: int, usage: dict) -> dict:
    """Terminal event of a successful turn; usage has input, output and total tokens."""
    return {"type": "done", "conversation_id": conversation_id, "steps": steps, "usage": usage}


def error(code: str, message: str, articles: list[dict] | None = None, **extra: Any) -> dict:
    """Terminal event of a failed turn; `extra` carries e.g. retry_after."""
    if code not in ERROR_CODES:
        raise ValueError(f"unknown error code {code!r}")
    return {"type": "error", "code": code, "message": message, "articles": articles or [], **extra}


def encode(event: dict) -> bytes:
    """One event as compact UTF-8 JSON; orjson, as the encoding is most of a frame's CPU."""
    try:
        return orjson.dumps(event, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:  # what orjson refuses (an integer over 64 bits in a tool's arguments)
        return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()


def sse_encode(event: dict) -> bytes:
    """Encode one event as a Server-Sent Events frame."""
    return b"data: " + encode(event) + b"\n\n"
