"""A read timeout for a streamed model answer that costs no timer per chunk.

aiohttp's `sock_read` timeout cancels and re-creates a timer for every chunk it receives:
about 7% of a streaming web process's CPU at one chunk per token (bench/chat_load.py
--profile). Here one timer per stream fires at most once per `seconds` and looks at when the
last chunk came (`touch()` stores the loop's clock): the same rule, "nothing for `seconds`",
checked lazily. On expiry it cancels the task like `asyncio.timeout()` and raises TimeoutError.
"""

from __future__ import annotations

import asyncio


class IdleTimeout:
    """`async with IdleTimeout(s) as idle:` ... `idle.touch()` on each chunk.

    `deadline` (seconds, optional) ends the stream that long after it started, however lively:
    an endpoint that sends only keep-alive comments or empty chunks touches the timer for ever.
    """

    def __init__(self, seconds: float, deadline: float | None = None) -> None:
        self.seconds = seconds
        self.deadline = deadline
        self.end = float("inf")
        self.expired = False
        self.reason = ""  # why it expired: "timeout" (silence) or "deadline"
        self.last = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def __aenter__(self) -> IdleTimeout:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self.last = self._loop.time()
        if self.deadline is not None:
            self.end = self.last + self.deadline
        self._timer = self._loop.call_at(self._due(), self._check)
        return self

    def _due(self) -> float:
        return min(self.last + self.seconds, self.end)

    def touch(self) -> None:
        self.last = self._loop.time()

    def _check(self) -> None:
        due = self._due()
        if self._loop.time() < due:  # a chunk came since: look again when it would be late
            self._timer = self._loop.call_at(due, self._check)
            return
        self.expired = True
        # In a word, for the metrics: a stream alive but never ending (keep-alive comments
        # only) is not a silent one, and the operator looks for different causes.
        self.reason = "deadline" if self._loop.time() >= self.end else "timeout"
        self._task.cancel()

    async def __aexit__(self, exc_type, exc, traceback) -> None:
        self._timer.cancel()
        # As asyncio.timeout(): our own cancellation becomes TimeoutError, anyone else's stays.
        if self.expired and exc_type is asyncio.CancelledError and self._task.uncancel() == 0:
            raise TimeoutError(self._why()) from exc

    def _why(self) -> str:
        if self._loop.time() >= self.end:
            return f"the stream ran past its {self.deadline:g} s deadline"
        return f"nothing received for {self.seconds:g} s"
