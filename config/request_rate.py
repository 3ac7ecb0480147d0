"""A cap on how fast one address sends HTTP requests: past it, 429 before Django sees them.

The caps in config.concurrency queue requests, never refuse them, and the probes are not
counted there: 2,000 `GET /healthz` pipelined on one connection (94 kB sent) cost a web process
6.4 CPU-seconds, about 3 ms each through Django, while every other visitor waited on the same
event loop. Each address now has a bucket of `burst` requests that refills at `per_second`; a
request that finds it empty is answered 429 with Retry-After here, for a few microseconds.

Loopback is not counted: it is this machine (health checks, the benches, the tests' clients),
as nginx's own limits do not count it. A static file served by the app takes a fraction of a
request (`static`): a page's CSS and scripts cost a few requests, not one each, yet uncounted
they were a way round the cap, 2,000 pipelined `GET /static/chat.css` costing 2.7 CPU-seconds
(and `/static/..%2fx`, a WARNING line each). The buckets live in the process: with
several web processes each sees its share of a visitor's requests, and nginx applies the same
rate per visitor address in front of them (`make run WORKERS=N`).

A WebSocket handshake takes a request from the same bucket: it is an HTTP request, and refused
ones (a foreign Origin, an address past AGENT_SOCKETS_PER_MINUTE_PER_IP) were counted nowhere,
so 2,000 of them from one client cost 3.3 CPU-seconds, as fast as it could send them. Past the
bucket a handshake is refused (403, as daphne answers any refused handshake) right here.

A refusal here still costs its connection: a client that opens a new one per request (as each
refused handshake must) paid about 1 ms of the event loop per refusal, Twisted's accept, parse
and the ASGI call, as fast as it could connect. Once an address has been refused, its new
connections are closed at daphne's socket as they are accepted (`exhausted`, asked by
docent/http_guard.py), for 0.09 ms each, until its bucket holds REOPEN_SHARE of its burst
again (a second at the defaults): closed only while the bucket was below one request, the
connections accepted at each refill, fifty at a time, still got their 429s.

An IPv6 visitor's /48 has a bucket of its own too (`network`, four addresses' worth by default):
counted by the /64 alone, each of a /48's 65,536 /64s had a full bucket, and 40 /64s of one
/48 had 40 bursts passed at once.
"""

from __future__ import annotations

import json
import math
import time

from agent.ratelimit import address_bucket, network_bucket
from config.origins import FOREIGN_FETCH_SITES
from config.proxy import client_is_loopback
from ops.metrics import refusal_count

# Buckets are dropped once full again (the address went quiet); a sweep runs every this many
# requests, so memory follows the addresses active in the last few seconds.
SWEEP_EVERY = 4096
NETWORK = "net:"  # the prefix of a /48's bucket
FOREIGN = "foreign:"  # the prefix of the buckets of requests sent for another site's page
# Once refused, an address's new connections are closed at the socket until its bucket holds
# this share of its burst again (at least one request).
REOPEN_SHARE = 0.1


class HttpRequestRate:
    """ASGI middleware: at most `burst` HTTP requests (WebSocket handshakes included) at once
    from one address, refilled at `per_second`; the rest get 429 (a handshake, 403)."""

    def __init__(
        self,
        application,
        *,
        per_second: float,
        burst: int,
        static: tuple[str, float] = ("", 1.0),
        network: tuple[float, int] | None = None,
        foreign_share: float = 0.25,
    ) -> None:
        self.application = application
        self.per_second = per_second
        self.burst = burst
        # (per second, burst) of an IPv6 /48's own bucket; None: four addresses' worth.
        self.network = network or (4 * per_second, 4 * burst)
        # (URL prefix, weight): what a static file takes from the bucket; "" counts it in full.
        self.static_prefix, self.static_weight = static
        self.foreign_share = foreign_share  # of each limit, for another site's page's requests
        self.buckets: dict[str, tuple[float, float]] = {}  # address -> (tokens, at)
        self.shut: set[str] = set()  # refused since their bucket last held REOPEN_SHARE
        self.seen = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] not in {"http", "websocket"}:
            return await self.application(scope, receive, send)
        client = str((scope.get("client") or ("",))[0])
        if not client or client_is_loopback(client):
            return await self.application(scope, receive, send)
        path = str(scope.get("path", ""))
        static = bool(self.static_prefix) and path.startswith(self.static_prefix)
        weight = self.static_weight if static else 1.0
        now = time.monotonic()
        prefix = FOREIGN if foreign_request(scope) else ""
        wait = self.take(
            prefix + address_bucket(client),
            now,
            weight,
            network=network_bucket(client),
            prefix=prefix,
        )
        if wait is None:
            return await self.application(scope, receive, send)
        refusal_count(reason="http_rate", address=client)
        if scope["type"] == "websocket":
            await _socket_refused(receive, send)
        else:
            await _too_many(send, path, wait)

    def exhausted(self, client: str) -> bool:
        """Whether a new connection from `client` is to be closed as it is accepted: its
        bucket (or its /48's) was refused a request and has not refilled to REOPEN_SHARE of
        its burst since. Loopback never is."""
        if not client or client_is_loopback(client):
            return False
        now = time.monotonic()
        network = network_bucket(client)
        keys = [address_bucket(client), *([NETWORK + network] if network else [])]
        for key in keys:
            if key in self.shut and self._level(key, now) >= self._reopen(key):
                self.shut.discard(key)
        return any(key in self.shut for key in keys)

    def _reopen(self, key: str) -> float:
        return max(1.0, REOPEN_SHARE * self._limits(key)[1])

    def take(
        self, key: str, now: float, weight: float = 1.0, *, network: str = "", prefix: str = ""
    ) -> float | None:
        """Spend `weight` (a request, or a static file's share) of `key`'s bucket, and of its
        `network`'s (an IPv6 /48, under the same `prefix`) when it has one: None when both had
        that much, else the seconds until they have. A refused request spends from neither."""
        self.seen += 1
        if self.seen % SWEEP_EVERY == 0:
            self.sweep(now)
        keys = [key, prefix + NETWORK + network] if network else [key]
        levels = [(name, self._level(name, now)) for name in keys]
        waits = [
            (weight - tokens) / self._limits(name)[0] for name, tokens in levels if tokens < weight
        ]
        spent = 0.0 if waits else weight
        for name, tokens in levels:
            self.buckets[name] = (tokens - spent, now)
            # Another site's page may not get the visitor's connections closed at the socket.
            if tokens < weight and not name.startswith(FOREIGN):
                self.shut.add(name)
        return max(waits) if waits else None

    def _level(self, key: str, now: float) -> float:
        """The tokens `key`'s bucket holds at `now`, refilled since it was last touched."""
        per_second, burst = self._limits(key)
        tokens, at = self.buckets.get(key, (float(burst), now))
        return min(float(burst), tokens + (now - at) * per_second)

    def _limits(self, key: str) -> tuple[float, int]:
        base = key.removeprefix(FOREIGN)
        per_second, burst = (
            self.network if base.startswith(NETWORK) else (self.per_second, self.burst)
        )
        if base == key:
            return per_second, burst
        return per_second * self.foreign_share, max(1, round(burst * self.foreign_share))

    def sweep(self, now: float) -> None:
        """Forget the addresses whose bucket has filled up again."""
        full = [key for key in self.buckets if self._level(key, now) >= self._limits(key)[1]]
        for key in full:
            del self.buckets[key]
            self.shut.discard(key)


def foreign_request(scope) -> bool:
    """Whether a browser sent this request for another site's page (`Sec-Fetch-Site:
    cross-site` or `same-site`), other than a top-level page the visitor opened by a click on a
    link: the same test as config.origins.cross_site's fetch metadata, read off the ASGI scope.

    A client may label its requests as it likes: so labelled, they only count in the smaller
    buckets (FOREIGN), never in none.
    """
    headers = dict(scope.get("headers") or [])
    if headers.get(b"sec-fetch-site", b"").decode("latin-1").lower() not in FOREIGN_FETCH_SITES:
        return False
    followed = (
        scope["type"] == "http"
        and scope.get("method") in {"GET", "HEAD"}
        and headers.get(b"sec-fetch-mode", b"").lower() == b"navigate"
        and headers.get(b"sec-fetch-dest", b"").lower() == b"document"
        and headers.get(b"sec-fetch-user", b"") == b"?1"
    )
    return not followed


async def _socket_refused(receive, send) -> None:
    """Refuse a WebSocket handshake: daphne answers a close before the accept with 403."""
    if (await receive())["type"] == "websocket.connect":
        await send({"type": "websocket.close"})


async def _too_many(send, path: str, wait: float) -> None:
    retry = max(1, math.ceil(wait))
    message = "Too many requests from your address. Try again in a moment."
    if path.startswith("/api/"):
        body, kind = json.dumps({"detail": message}).encode(), b"application/json"
    else:
        body, kind = message.encode(), b"text/plain; charset=utf-8"
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", kind),
                (b"retry-after", str(retry).encode()),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
                (b"x-content-type-options", b"nosniff"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
