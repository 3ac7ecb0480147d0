"""Run a tool's ORM work in a worker thread without serializing concurrent tool calls."""

from collections.abc import Callable
from typing import Any

from channels.db import database_sync_to_async


def off_loop(func: Callable[..., Any]) -> Callable[..., Any]:
    # database_sync_to_async closes stale connections around each call; thread_sensitive=False
    # lets several tool calls of one step query the database at the same time.
    return database_sync_to_async(func, thread_sensitive=False)
