"""Text PostgreSQL and UTF-8 can hold: no NUL, no lone UTF-16 surrogate. Framework-free."""

import re
from typing import Any

# Lone surrogates (unpaired halves, as a JSON `\ud800` escape decodes to) and NUL.
INVALID = re.compile("[\x00\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def text_scrub(value: Any) -> Any:
    """`value` with NUL and lone surrogates replaced by U+FFFD, so it can be stored and encoded."""
    if isinstance(value, str):
        return INVALID.sub(REPLACEMENT, value) if INVALID.search(value) else value
    if isinstance(value, list):
        return [text_scrub(item) for item in value]
    if isinstance(value, tuple):
        return tuple(text_scrub(item) for item in value)
    if isinstance(value, dict):
        return {text_scrub(key): text_scrub(item) for key, item in value.items()}
    return value
