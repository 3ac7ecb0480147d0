"""Fewer frames per answer: text deltas joined into one `text` frame per interval.

A model streams 30-100 deltas a second, and each frame costs the server a JSON encoding, a
WebSocket (or SSE) write and a syscall. TextFrames sits between a turn and its transport:

- the first delta after a quiet interval goes out at once (time to first token is unchanged);
- later deltas wait until `interval` has passed since the last frame, then go out as one;
- a frame also goes out as soon as `max_chars` are waiting (a fast model's burst);
- every other event first sends the waiting text, so the order of the protocol holds.

`flush()` sends what is waiting (a stopped turn shows all the text it saved); `close()` drops
it (the visitor left). With `interval` 0 every delta is its own frame, as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from agent import events

logger = logging.getLogger(__name__)

Emit = Callable[[dict], Awaitable[None]]


class TextFrames:
    """Wraps a transport's `emit`; itself an `emit` for the turn runner."""

    def __init__(self, emit: Emit, *, interval: float = 0.05, max_chars: int = 1024) -> None:
        self._emit = emit
        self.interval = interval
        self.max_chars = max_chars
        self._pending: list[str] = []
        self._size = 0
        self._next_at = 0.0  # loop time before which a delta waits
        self._timer: asyncio.TimerHandle | None = None
        self._flusher: asyncio.Task | None = None  # a flush started by the timer
        self.closed = False

    async def __call__(self, event: dict) -> None:
        if self.closed:
            return
        if event["type"] == "text" and self.interval > 0:
            await self._text(event["content"])
            return
        await self.flush()
        if event["type"] in ("done", "error"):
            self.close()  # nothing of this turn may follow its last event
        await self._emit(event)

    async def _text(self, delta: str) -> None:
        self._pending.append(delta)
        self._size += len(delta)
        loop = asyncio.get_running_loop()
        if self._size >= self.max_chars or loop.time() >= self._next_at:
            await self.flush()
        elif self._timer is None:
            self._timer = loop.call_at(self._next_at, self._due)

    async def flush(self) -> None:
        """Send the waiting text now, after a timer's flush that is already sending."""
        flusher = self._flusher
        if flusher is not None and flusher is not asyncio.current_task() and not flusher.done():
            await asyncio.shield(flusher)  # its frame was taken first, so it goes first
        self._cancel_timer()
        if not self._pending:
            return
        content = "".join(self._pending)
        self._pending.clear()
        self._size = 0
        self._next_at = asyncio.get_running_loop().time() + self.interval
        await self._emit(events.text(content))

    def close(self) -> None:
        """Drop the waiting text and ignore whatever comes after (the transport is gone)."""
        self.closed = True
        self._cancel_timer()
        self._pending.clear()
        self._size = 0

    def _due(self) -> None:
        self._timer = None
        if self._pending and not self.closed:
            self._flusher = asyncio.get_running_loop().create_task(self.flush())
            self._flusher.add_done_callback(_log_failure)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _log_failure(task: asyncio.Task) -> None:
    # A transport that failed is also seen by the turn's next emit; log it, don't raise twice.
    if not task.cancelled() and task.exception() is not None:
        logger.warning("sending a text frame failed: %r", task.exception())


def text_frames(emit: Emit) -> TextFrames:
    """TextFrames as configured (AGENT_TEXT_FRAME_MS, AGENT_TEXT_FRAME_CHARS)."""
    from django.conf import settings

    return TextFrames(
        emit,
        interval=settings.AGENT_TEXT_FRAME_MS / 1000,
        max_chars=settings.AGENT_TEXT_FRAME_CHARS,
    )
