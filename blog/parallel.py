"""The full-text half of a search on a second database connection, while the vector half runs.

The two halves are independent queries; on a large index each takes a few milliseconds, so
running them side by side takes the longer of the two instead of their sum. Each worker thread
keeps its own Django connection (Django connections are per thread).
"""

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from django.db import close_old_connections, connections

WORKERS = 2  # concurrent searches in one process beyond this wait for a worker
_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def submit(fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
    """Run `fn` on a search worker thread, with that thread's own connection."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="search-text")
        pool = _pool
    return pool.submit(_run, fn, args, kwargs)


def _run(fn: Callable, args: tuple, kwargs: dict) -> Any:
    close_old_connections()  # a connection the database dropped is replaced, not reused
    return fn(*args, **kwargs)


def close() -> None:
    """Close the workers' connections and stop them (tests, before their database goes)."""
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is None:
        return
    # One task per worker: the barrier holds each until all run, so every thread gets one.
    barrier = threading.Barrier(WORKERS)

    def close_own() -> None:
        barrier.wait(timeout=10)
        connections.close_all()

    for future in [pool.submit(close_own) for _ in range(WORKERS)]:
        future.result()
    pool.shutdown(wait=True)
