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
"""

from __future__ import annotations

import ipaddress
import json
import math
import time

from agent.ratelimit import address_bucket
from ops.metrics import refusal_count

# Buckets are dropped once full again (the address went quiet); a sweep runs every this many
# requests, so memory follows the addresses active in the last few seconds.
SWEEP_EVERY = 4096


class HttpRequestRate:
    """ASGI middleware: at most `burst` HTTP requests at once from one address, refilled at
    `per_second`; the rest get 429."""

    def __init__(
        self,
        application,
        *,
        per_second: float,
        burst: int,
        static: tuple[str, float] = ("", 1.0),
    ) -> None:
        self.application = application
        self.per_second = per_second
        self.burst = burst
        # (URL prefix, weight): what a static file takes from the bucket; "" counts it in full.
        self.static_prefix, self.static_weight = static
        self.buckets: dict[str, tuple[float, float]] = {}  # address -> (tokens, at)
        self.seen = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.application(scope, receive, send)
        client = str((scope.get("client") or ("",))[0])
        if not client or _loopback(client):
            return await self.application(scope, receive, send)
        path = str(scope.get("path", ""))
        static = bool(self.static_prefix) and path.startswith(self.static_prefix)
        weight = self.static_weight if static else 1.0
        wait = self.take(address_bucket(client), time.monotonic(), weight)
        if wait is None:
            return await self.application(scope, receive, send)
        refusal_count(reason="http_rate")
        await _too_many(send, path, wait)

    def take(self, key: str, now: float, weight: float = 1.0) -> float | None:
        """Spend `weight` (a request, or a static file's share) of `key`'s bucket: None when
        there was that much, else the seconds until there is."""
        self.seen += 1
        if self.seen % SWEEP_EVERY == 0:
            self.sweep(now)
        tokens, at = self.buckets.get(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.per_second)
        if tokens < weight:
            self.buckets[key] = (tokens, now)
            return (weight - tokens) / self.per_second
        self.buckets[key] = (tokens - weight, now)
        return None

    def sweep(self, now: float) -> None:
        """Forget the addresses whose bucket has filled up again."""
        full = [
            key
            for key, (tokens, at) in self.buckets.items()
            if tokens + (now - at) * self.per_second >= self.burst
        ]
        for key in full:
            del self.buckets[key]


def _loopback(client: str) -> bool:
    try:
        return ipaddress.ip_address(client).is_loopback
    except ValueError:
        return False


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
