"""Waiting on a live server in tests: poll a condition, a session blocked on a lock, a gauge,
how long the health check waits."""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
from django.db import connection


def wait_until(check, what: str, seconds: float = 90) -> None:
    """Poll until `check()`; the deadline only stops a broken run from hanging."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def blocked_on_a_lock() -> bool:
    with connection.cursor() as cursor:
        # pg_locks, not pg_stat_activity: that one is a snapshot fixed for the transaction.
        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
        return cursor.fetchone()[0] > 0


def open_sockets(server) -> float:
    """The server's `docent_open_sockets` gauge, read from its /metrics."""
    body = httpx.get(server.url + "/metrics").text
    lines = [line for line in body.splitlines() if line.startswith("docent_open_sockets")]
    return float(lines[0].split()[-1])


@contextmanager
def health_waits(server, *, after: float = 0.3) -> Iterator[list[float]]:
    """How long each /healthz took, polled every 20 ms while the block runs and `after` seconds
    more: work that holds the process's event loop shows as a long wait (at least one is read)."""
    waits: list[float] = []
    done = threading.Event()

    def probe() -> None:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            while not done.is_set() or not waits:
                started = time.monotonic()
                client.get("/healthz")
                waits.append(time.monotonic() - started)
                time.sleep(0.02)

    prober = threading.Thread(target=probe)
    prober.start()
    try:
        yield waits
        time.sleep(after)
    finally:
        done.set()
        prober.join()
