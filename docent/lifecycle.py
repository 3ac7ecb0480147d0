"""What a serving process does when the reactor starts and before it stops (SIGTERM, Ctrl-C)."""

import asyncio
import logging
import signal

from daphne.http_protocol import WebRequest
from daphne.server import Server
from django.conf import settings
from twisted.internet import defer, reactor

from agent.runner import runner
from blog.indexing import indexing_stop
from docent import startup
from docent.http_guard import GuardedServer
from ops import loop_lag, metrics
from ops.loop_lag import loop_lag_watch

logger = logging.getLogger(__name__)

_worker: list[asyncio.Task] = []
_watches: list[asyncio.Future] = []  # held: the loop keeps only weak references to tasks
_servers: list["DrainingServer"] = []
# How long the drain waits for HTTP requests that had not reached the runner when it began.
REQUESTS_WAIT_SECONDS = 10.0


class DrainingServer(Server):
    """daphne's server that can close its listening sockets and list its unfinished HTTP
    requests: what a drain needs so that no visitor's connection is closed without an answer."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.ports: list = []
        _servers.append(self)

    def listen_success(self, port) -> None:
        self.ports.append(port)
        super().listen_success(port)

    def stop_listening(self) -> None:
        """New connections are refused from now on; the proxy sends them to a live worker
        (nginx retries a refused connect on the next server, POST included: nothing was sent)."""
        for port in self.ports:
            port.stopListening()
        self.ports.clear()

    def requests_in_flight(self) -> list[asyncio.Future]:
        """The HTTP requests (not WebSockets) whose application has not finished."""
        return [
            details["application_instance"]
            for protocol, details in list(self.connections.items())
            if isinstance(protocol, WebRequest)
            and "application_instance" in details
            and not details["application_instance"].done()
        ]


class DocentServer(DrainingServer, GuardedServer):
    """The server `serve` runs: the drain above, and the per-address connection and body caps
    (docent/http_guard.py)."""


def on_startup(*, worker: bool) -> None:
    """Start the in-process task worker (one-process `make run`) once the event loop runs,
    and load the embedding model in a thread meanwhile (the first search waited for it)."""
    if worker:
        reactor.callWhenRunning(lambda: _worker.append(startup.worker_start_in_process()))
    if settings.EMBEDDING_WARM_AT_START:
        loop_lag.warming_up.set()
        reactor.callWhenRunning(lambda: reactor.callInThread(embedder_warm_quietly))


def on_startup_lag_watch() -> None:
    """Measure how late the event loop runs (ops/loop_lag.py) from the moment it runs."""
    reactor.callWhenRunning(lambda: _watches.append(asyncio.ensure_future(loop_lag_watch())))


def embedder_warm_quietly() -> None:
    """Warm the embedder and the word list (blog.commonness); a failure is only logged: the
    first search then loads them, or says why."""
    from blog import commonness
    from blog.embeddings import embedder_warm

    try:
        embedder_warm()
        commonness.warm()
    except Exception:
        logger.exception("the embedding model could not be loaded ahead of the first search")
    finally:
        loop_lag.warming_up.clear()


def on_shutdown_drain() -> None:
    """On SIGTERM/SIGINT: close the listening sockets, fail /readyz and refuse turns at once,
    let running turns finish for
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
        metrics.DRAINING.set(1)  # from the signal on, as /readyz fails
        for server in _servers:
            server.stop_listening()
        done = defer.Deferred.fromFuture(_drain())
        done.addErrback(lambda failure: logger.error("drain failed: %s", failure.value))
        done.addBoth(lambda _: reactor.stop())

    def install() -> None:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: reactor.callFromThread(begin))

    reactor.callWhenRunning(install)
    # If the reactor stops some other way, still save what runs (no event can be sent then).
    reactor.addSystemEventTrigger("before", "shutdown", lambda: defer.Deferred.fromFuture(_drain()))


_drained: list[asyncio.Future] = []


def _drain() -> asyncio.Future:
    """The drain, started once (by the signal, or by the reactor's shutdown otherwise)."""
    if not _drained:
        _drained.append(asyncio.ensure_future(_drain_once()))
    return _drained[0]


async def _drain_once() -> None:
    await runner.shutdown(drain=settings.AGENT_DRAIN_SECONDS)
    # Requests that were still on their way to the runner (session, middleware) when the
    # drain began: they now get `unavailable` at once; wait for them to send it, or daphne
    # would close their connections without a word when the reactor stops.
    in_flight = [future for server in _servers for future in server.requests_in_flight()]
    if in_flight:
        await asyncio.wait(in_flight, timeout=REQUESTS_WAIT_SECONDS)
    indexing_stop()  # a reindex scan's thread ends after its current article
    for task in _worker:
        task.cancel()  # procrastinate finishes or abandons the running job; stalled ones retry
    if _worker:
        await asyncio.wait(_worker, timeout=10)
