"""What a serving process does when the reactor starts and before it stops (SIGTERM, Ctrl-C)."""

import asyncio
import logging

from django.conf import settings
from twisted.internet import defer, reactor

from agent.runner import runner
from docent import startup

logger = logging.getLogger(__name__)

_worker: list[asyncio.Task] = []


def on_startup(*, worker: bool) -> None:
    """Start the in-process task worker (one-process `make run`) once the event loop runs."""
    if worker:
        reactor.callWhenRunning(lambda: _worker.append(startup.worker_start_in_process()))


def on_shutdown_drain() -> None:
    """On SIGTERM/SIGINT: fail /readyz and refuse turns at once, let running turns finish for
    AGENT_DRAIN_SECONDS, end the rest with `unavailable`, wait for saves, stop the worker."""

    def drain() -> defer.Deferred:
        runner.closing = True  # at once, before daphne starts cancelling connections
        return defer.Deferred.fromFuture(asyncio.ensure_future(_drain()))

    reactor.addSystemEventTrigger("before", "shutdown", drain)


async def _drain() -> None:
    await runner.shutdown(drain=settings.AGENT_DRAIN_SECONDS)
    for task in _worker:
        task.cancel()  # procrastinate finishes or abandons the running job; stalled ones retry
    if _worker:
        await asyncio.wait(_worker, timeout=10)
