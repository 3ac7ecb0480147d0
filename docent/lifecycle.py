"""What a serving process does when the reactor starts and before it stops (SIGTERM, Ctrl-C)."""

import asyncio
import logging
import signal

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
    AGENT_DRAIN_SECONDS, end the rest with `unavailable`, wait for saves, stop the worker;
    only then stop the reactor.

    Twisted's own handlers would stop the reactor at once, and daphne cancels every
    connection in its "before shutdown" trigger, so the last event could never be sent.
    A second signal stops at once.
    """
    state = {"draining": False}

    def begin() -> None:
        if state["draining"]:
            reactor.stop()
            return
        state["draining"] = True
        runner.closing = True
        done = defer.Deferred.fromFuture(asyncio.ensure_future(_drain()))
        done.addErrback(lambda failure: logger.error("drain failed: %s", failure.value))
        done.addBoth(lambda _: reactor.stop())

    def install() -> None:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: reactor.callFromThread(begin))

    reactor.callWhenRunning(install)
    # If the reactor stops some other way, still save what runs (no event can be sent then).
    reactor.addSystemEventTrigger(
        "before", "shutdown", lambda: defer.Deferred.fromFuture(asyncio.ensure_future(_drain()))
    )


async def _drain() -> None:
    await runner.shutdown(drain=settings.AGENT_DRAIN_SECONDS)
    for task in _worker:
        task.cancel()  # procrastinate finishes or abandons the running job; stalled ones retry
    if _worker:
        await asyncio.wait(_worker, timeout=10)
