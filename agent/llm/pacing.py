"""Reads a streamed answer once per text frame instead of once per token.

Text reaches the visitor at most once per frame interval (agent/coalesce.py), yet a model
sends a token every 10-30 ms, and each token the web process reads costs an epoll wake-up, a
`recv`, aiohttp's parser, a task step and a JSON parse (bench/chat_load.py --profile). After a
block that carried text went out, ReadPacer stops reading the model's socket for one frame
interval: the tokens wait in the kernel and are read, parsed and framed together.

Only text blocks start a pause, and the first one only after it was sent, so the time to first
token does not change. A tool call, `done` or an error that comes within a pause waits at most
one interval, as the text before it would have waited for its frame. aiohttp's own flow control
may resume reading early (it resumes the transport whenever its buffer is read); that only
means a shorter pause, and the next text block pauses again.
"""

from __future__ import annotations

import asyncio


class ReadPacer:
    """`hold()` after a text block was sent; `release()` when the stream ends, however."""

    def __init__(self, transport: asyncio.Transport | None, seconds: float) -> None:
        self.seconds = seconds
        self._transport = transport if seconds > 0 else None
        self._timer: asyncio.TimerHandle | None = None

    def hold(self) -> None:
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        transport.pause_reading()
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(self.seconds, self._resume)

    def release(self) -> None:
        """Read again now: a connection must never go back to the pool paused."""
        if self._timer is not None:
            self._timer.cancel()
            self._resume()

    def _resume(self) -> None:
        self._timer = None
        transport = self._transport
        if transport is not None and not transport.is_closing():
            transport.resume_reading()
