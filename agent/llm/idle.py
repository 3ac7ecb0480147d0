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
    """`async with IdleTimeout(s) as idle:` ... `idle.touch()` on each chunk."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self.last = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def __aenter__(self) -> IdleTimeout:
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        self.last = self._loop.time()
        self._timer = self._loop.call_at(self.last + self.seconds, self._check)
        return self

    def touch(self) -> None:
        self.last = self._loop.time()

    def _check(self) -> None:
        due = self.last + self.seconds
        if self._loop.time() < due:  # a chunk came since: look again when it would be late
            self._timer = self._loop.call_at(due, self._check)
            return
        self.expired = True
        self._task.cancel()

    async def __aexit__(self, exc_type, exc, traceback) -> None:
        self._timer.cancel()
        # As asyncio.timeout(): our own cancellation becomes TimeoutError, anyone else's stays.
        if self.expired and exc_type is asyncio.CancelledError and self._task.uncancel() == 0:
            raise TimeoutError(f"nothing received for {self.seconds:g} s") from exc
