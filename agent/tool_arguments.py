"""A model's tool-call arguments, parsed into something storable and sendable whatever it
wrote, and a validation error told back to it in one line. Framework-free, like the loop."""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import ValidationError

from agent.text import text_scrub

# Tool arguments nested deeper are bad arguments: they could neither be scrubbed nor encoded.
MAX_ARGUMENT_DEPTH = 32


def arguments_parse(raw: str) -> dict | str:
    """The parsed arguments object, or the raw text when it is not a JSON object."""
    # The record must be storable whatever the model wrote: PostgreSQL's json refuses NaN and
    # Infinity (Python's parser accepts them, and 1e400 is infinity), and 20,000 nested
    # brackets stopped Python's parser with a RecursionError. The first spooled the turn for
    # good (every save failed), the second ended it as `internal`; both are bad arguments.
    try:
        parsed = (
            json.loads(raw, parse_float=_finite, parse_constant=_not_a_number)
            if raw.strip()
            else {}
        )
    except (ValueError, RecursionError):
        parsed = None
    # The parser's limit is C's (about 1,500 levels), the rest of the turn's Python's (1,000, less
    # the stack under it): 1,200 nested brackets parsed, then broke the scrub below with a
    # RecursionError, and the turn ended as `internal`, its tool call unrecorded. A tool's
    # arguments are a few flat fields; far deeper ones are bad arguments as well.
    if isinstance(parsed, dict) and _nested_deeper(parsed, MAX_ARGUMENT_DEPTH):
        parsed = None
    # An escape in the arguments can decode to NUL or a lone surrogate: never sendable or storable.
    return text_scrub(parsed if isinstance(parsed, dict) else raw)


def _nested_deeper(value: Any, limit: int) -> bool:
    """Whether `value` nests lists and objects more than `limit` deep (without recursing)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, dict | list):
            continue
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children)
    return False


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} is too large a number")
    return number


def _not_a_number(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def validation_describe(exc: ValidationError) -> str:
    """The validation errors in one line for the model: each field's path and what is wrong."""
    errors = exc.errors(include_url=False)
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in errors)
