"""A cap on plain HTTP requests in flight, per process and per client address.

Django runs each sync view in a thread with a database connection of its own, and nothing
bounded how many ran at once: 90 concurrent GETs of /api/articles from one client opened 100
connections, PostgreSQL refused the rest (500s), and the connections stayed open afterwards.
Requests past the cap wait their turn instead of failing. One address may fill only part of the
slots, so a burst from one client leaves room for everyone else. The chat's SSE stream is not
counted there: its turns must not wait behind page loads. It has a cap of its own, on streams
*starting*: the session's save and the turn's preparation run before the first event, each in
a request thread with a connection of its own, and a hundred at once left PostgreSQL refusing
everyone, `/readyz` included. A stream's slot is given back with its first event; from there it
holds no connection of its own (agent/api.py), so a long answer does not keep the next visitor
waiting.

Each request's sync code runs in a thread of its own, so a connection kept for reuse
(CONN_MAX_AGE) was never reused: it stayed open, in a reference cycle, until a full garbage
collection. `connections_close_after_request` closes it when the request finishes.

An IPv6 visitor's /48 has a share of its own (`per_network`, four addresses' worth by default):
by the /64 alone, four /64s of one /48 filled four addresses' shares at once, and enough of
them every slot of the process, which the per-address share exists to prevent.
"""

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import DatabaseError, connections

from agent.ratelimit import address_bucket, network_bucket

CHAT_STREAM = "/api/chat"
# The probes: /healthz touches nothing, /readyz shares one check in flight (docent/health.py).
UNCOUNTED = frozenset({CHAT_STREAM, "/healthz", "/readyz"})


def plain_request(path: str) -> bool:
    """Counted by the plain requests' cap: all but the chat's stream and the probes."""
    return path not in UNCOUNTED


def chat_stream(path: str) -> bool:
    """Counted by the chat streams' cap."""
    return path == CHAT_STREAM


@dataclass
class _Gate:
    slots: asyncio.Semaphore
    users: int = field(default=0)


class HttpConcurrencyLimit:
    """ASGI middleware: at most `total` HTTP requests it `counts` in the app, `per_client` from
    one address; the others pass. With `until_first_body`, a request's slots are given back
    when its first body chunk is sent (a stream's first event) rather than when it ends."""

    def __init__(
        self,
        application,
        *,
        total: int,
        per_client: int,
        counts: Callable[[str], bool] = plain_request,
        until_first_body: bool = False,
        per_network: int | None = None,
    ) -> None:
        self.application = application
        self.counts = counts
        self.total = asyncio.Semaphore(total)
        self.per_client = per_client
        self.per_network = per_network or 4 * per_client
        self.until_first_body = until_first_body
        self.gates: dict[str, _Gate] = {}

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not self.counts(str(scope.get("path"))):
            return await self.application(scope, receive, send)
        address = str((scope.get("client") or ("",))[0])
        network = network_bucket(address)
        gates = [self._gate(address_bucket(address), self.per_client)]
        if network:
            gates.append(self._gate(f"net:{network}", self.per_network))
        taken: list[asyncio.Semaphore] = []

        def give_back() -> None:
            while taken:
                taken.pop().release()

        async def sending(message: dict) -> None:
            if message["type"] == "http.response.body":
                give_back()
            await send(message)

        try:
            # The client's own slot first, then its network's, so its queued requests hold
            # none of the shared ones; always in that order, so two never wait on each other.
            for slots in [*(gate.slots for _, gate in gates), self.total]:
                await slots.acquire()
                taken.append(slots)
            return await self.application(
                scope, receive, sending if self.until_first_body else send
            )
        finally:
            give_back()
            for key, gate in gates:
                gate.users -= 1
                if gate.users == 0:
                    del self.gates[key]

    def _gate(self, key: str, slots: int) -> tuple[str, _Gate]:
        gate = self.gates.setdefault(key, _Gate(asyncio.Semaphore(slots)))
        gate.users += 1
        return key, gate


def connections_close_after_request(**_kwargs) -> None:
    """request_finished receiver: close this request thread's database connections.

    Not from async code (the test client closes streamed responses in its event loop;
    connections may not be touched there, and Django's own receiver has the same rule).
    """
    try:
        asyncio.get_running_loop()
        return
    except RuntimeError:
        pass  # a sync thread: the request's own
    connections_close_here()


def connections_close_here() -> None:
    """Close the calling thread's database connections; one inside a transaction (a test's)
    is left alone, and one that broke meanwhile is dropped all the same."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            try:
                connection.close()
            except DatabaseError:
                pass
