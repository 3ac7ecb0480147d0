"""Visitor input at the edge: bounded JSON parsing and text PostgreSQL can store.

Every chat frame (WebSocket) and JSON body (the API) is parsed here: a size cap, then
`json.loads` (its recursion error caught), a cap on depth and on the number of values, and
every string checked for what a turn could never save (lone UTF-16 surrogates, NUL). A refusal
is a `FrameError` whose text is shown to the visitor. Model and tool output is scrubbed
instead (`text_scrub`, agent/text.py).
"""

import json
import uuid
from typing import Any

from django.conf import settings

from agent.schemas import ChatIn
from agent.text import INVALID, text_scrub

__all__ = [
    "BOM_REFUSED",
    "CONVERSATION_ID_INVALID",
    "FrameError",
    "FrameWindow",
    "conversation_id_parse",
    "json_parse",
    "text_check",
    "text_scrub",
]

# Said for a conversation id that is present and not one, on the socket and over SSE alike.
CONVERSATION_ID_INVALID = (
    "conversation_id is not a valid id. Send a conversation's id (a UUID), "
    "or leave it out (or null) to start a new chat."
)

BOM_REFUSED = (
    "The request starts with a byte order mark (U+FEFF, bytes EF BB BF). Send the JSON without it."
)


class FrameError(ValueError):
    """The input cannot be taken; the text says why, for the visitor."""


class FrameWindow:
    """At most `limit` frames in any 60 s (a moving window): the times of the last `limit`.

    A list, not a `deque(maxlen=limit)`: a deque allocates a block of 64 slots up front (760
    bytes), and each chat socket keeps two windows for the one or two frames it usually gets.
    """

    __slots__ = ("limit", "times")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.times: list[float] = []

    def over(self, now: float) -> bool:
        """True when a frame at `now` is one too many; else it is counted."""
        if len(self.times) >= self.limit:
            if now - self.times[0] < 60:
                return True
            del self.times[0]  # moves at most `limit` (a few hundred) floats
        self.times.append(now)
        return False


def json_parse(raw: str | bytes, *, max_bytes: int | None = None, max_depth: int | None = None):
    """Parse JSON within the size, depth and value-count limits, refusing invalid text anywhere
    in it.

    Raises:
        FrameError: too large, too deep, too many values, not JSON, or a string with NUL or a
            lone surrogate.
    """
    max_bytes = max_bytes or settings.AGENT_MAX_FRAME_BYTES
    max_depth = max_depth or settings.AGENT_MAX_JSON_DEPTH
    # A WebSocket text frame arrives decoded: its length is in characters, up to four bytes
    # each, so a frame four times the cap passed it. Encoded only when it could be over.
    if len(raw) > max_bytes or (
        isinstance(raw, str)
        and len(raw) * 4 > max_bytes
        and len(raw.encode("utf-8", "surrogatepass")) > max_bytes
    ):
        raise FrameError(f"The request is larger than {max_bytes:,} bytes.")
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise FrameError("The request is not valid UTF-8.") from None
    if raw.startswith("\ufeff"):
        # JSON on the network has no byte order mark (RFC 8259, 8.1), and `json.loads` refuses
        # one: the refusal said only "not valid JSON", of a text that was JSON after the mark.
        raise FrameError(BOM_REFUSED)
    too_deep = FrameError(f"The JSON is nested deeper than {max_depth} levels.")
    try:
        value = json.loads(raw)
    except RecursionError:  # the size cap keeps this cheap; the depth cap below is the rule
        raise too_deep from None
    except ValueError:
        raise FrameError("The request is not valid JSON.") from None
    _shape_check(value, max_depth=max_depth, too_deep=too_deep)
    text_check(value)
    return value


def conversation_id_parse(value: Any) -> uuid.UUID | None:
    """A frame's `conversation_id`: None when absent or null (a new conversation), else its UUID.

    Only null means "none". `0`, `false` and `""` were read as falsy and started a new
    conversation in silence, so a client with a broken id lost its history without a word,
    and each such message was a fresh conversation (with a fresh budget). A number is not an
    id either, though its digits may spell one: SSE's schema refuses it, so the socket does.

    Raises:
        FrameError: anything else than null, a UUID or a string spelling one.
    """
    if value is None or isinstance(value, uuid.UUID):  # SSE's schema has parsed it already
        return value
    if not isinstance(value, str):
        raise FrameError(CONVERSATION_ID_INVALID)
    try:
        return uuid.UUID(value)
    except ValueError:
        raise FrameError(CONVERSATION_ID_INVALID) from None


# The protocol's own field names (chat frames, votes: ChatIn's): only these are named in a
# refusal. Any other key is the sender's text, up to a frame's size: "The text in 'Your session
# expired, visit evil.example' contains…" read as the site's own words.
PROTOCOL_FIELDS = frozenset(ChatIn.model_fields)


def text_check(value: Any, *, field: str = "") -> None:
    """Refuse NUL and lone surrogates in every string of `value`, keys included.

    Raises:
        FrameError: naming the protocol field that holds the bad character, if it is one.
    """
    if isinstance(value, str):
        if INVALID.search(value):
            raise FrameError(_invalid_text(f" in {field!r}" if field else ""))
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and INVALID.search(key):
                raise FrameError(_invalid_text(" of a field name"))
            text_check(item, field=field or (key if key in PROTOCOL_FIELDS else ""))
    elif isinstance(value, list):
        for item in value:
            text_check(item, field=field)


def _invalid_text(where: str) -> str:
    return (
        f"The text{where} contains a character that is not valid Unicode text "
        "(a NUL or a lone surrogate); remove it and resend."
    )


def _shape_check(value: Any, *, max_depth: int, too_deep: FrameError) -> None:
    """Refuse a value nested past `max_depth` or holding more than AGENT_MAX_JSON_VALUES values.

    A frame needs a handful of values, yet 64 kB of `[[],[],…]` holds 21,000: walking them all
    (a tuple per value, then the text check) cost 46 ms of the event loop per frame, and ten
    sockets of one address sending their allowed frames kept a process busy for 45 s, its
    /healthz waiting 4 s. A container's size is checked before its values are queued, so the
    walk stops within the cap. Iterative, so it never recurses either.
    """
    max_values = settings.AGENT_MAX_JSON_VALUES
    seen, stack = 1, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        if depth > max_depth:
            raise too_deep
        seen += len(item)
        if seen > max_values:
            raise FrameError(f"The JSON holds more than {max_values:,} values.")
        stack.extend((child, depth + 1) for child in item)
