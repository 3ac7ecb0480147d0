"""Side database connections for a search's slow statements, so its legs run at once.

The calling thread sends the full-text statement on one side connection and the later
languages' nearest lists (the Chinese walk) on another without waiting for them, then runs the
rest on its own Django connection, then reads the side rows: the three legs run side by side in
three PostgreSQL backends, with no second Python thread to wake
(blog.search_fetch.lists_fetch). Side connections are plain psycopg connections opened with
Django's parameters, kept idle between searches and shared by the process's threads. Any
failure on one (the server restarted, the connection was killed) discards it, and the search
runs its full-text half on its own connection instead.
"""

import threading

import psycopg
from django.db import connection

from blog import search_sql

# Idle side connections kept (a hybrid search takes two); a busier process opens more and
# closes the extra.
IDLE_MAX = 4
_lock = threading.Lock()
_idle: list[psycopg.Connection] = []


def take() -> psycopg.Connection | None:
    """An idle side connection, or a new one; None when none can be opened."""
    with _lock:
        while _idle:
            side = _idle.pop()
            if not side.closed:
                return side
    try:
        return _open()
    except psycopg.Error:
        return None  # the caller runs both halves on its own connection


def give_back(side: psycopg.Connection) -> None:
    """Keep a side connection that finished cleanly for the next search."""
    if side.closed or side.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        side.close()
        return
    with _lock:
        if len(_idle) < IDLE_MAX:
            _idle.append(side)
            return
    side.close()


def discard(side: psycopg.Connection) -> None:
    """Close a side connection that failed or was left mid-statement; it is never reused."""
    side.close()


def close() -> None:
    """Close the idle side connections (tests, before their database goes)."""
    with _lock:
        idle, _idle[:] = list(_idle), []
    for side in idle:
        side.close()


def _open() -> psycopg.Connection:
    # Django's parameters (host, credentials, options), without its cursor class: the search
    # makes its own cursors (blog.search_sql.search_cursor).
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    side = psycopg.connect(**params, autocommit=True)
    try:
        search_sql.vector_register(side)
    except psycopg.Error:
        side.close()
        raise
    return side
