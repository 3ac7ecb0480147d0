"""Walk 24: the database down, `make run`'s output tells it in a few lines, not hundreds."""

import logging
from types import SimpleNamespace

import httpx
import psycopg
import pytest
from django.db import connection

from ops.logs import ContextFormatter, DatabaseDownFilter, bound
from testing_support.waits import wait_until
from tests.agent.test_persistence import DatabaseOutage
from tests.ops.log_capture import log_through
from tests.ops.test_incidents_live import _queue_empty, _server

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_outage_is_a_few_lines_without_tracebacks(tmp_path):
    # PostgreSQL restarted under `make run` (47 s down): 202 lines, the pool's every
    # reconnection attempt (two lines each, one to three a second) and 35-line tracebacks from
    # procrastinate's listener and the task worker's restart, all ending "Database error.".
    _queue_empty("index")
    with _server("database-down", tmp_path, TASK_WORKER_IN_PROCESS="true") as server:
        before = len(server.output())
        outage = DatabaseOutage()
        outage.begin()
        try:
            for _ in range(3):
                assert httpx.get(server.url + "/", timeout=30).status_code == 503
            wait_until(
                lambda: "restarting in 5 s" in server.output()[before:],
                "the task worker noticed the outage",
                seconds=90,
            )
        finally:
            outage.end()
            connection.close()
        wait_until(lambda: httpx.get(server.url + "/readyz").status_code == 200, "ready again")
        told = server.output()[before:]

    assert "Traceback" not in told
    # Each kind of the pool's lines once at most: its reconnection attempts, and the pooled
    # connections the outage closed (one each, as the pool finds them).
    assert told.count("psycopg.pool: error connecting") <= 1
    assert told.count("psycopg.pool: discarding closed connection") <= 1
    # One line per page refused, config.outage's; Django's own "Service Unavailable: /" at
    # ERROR after each said it again.
    assert told.count("database unavailable for /") == 3
    assert "Service Unavailable" not in told


def _lines(emit) -> list[str]:
    formatter = ContextFormatter("%(levelname)s %(name)s: %(message)s")
    return log_through(formatter, emit, DatabaseDownFilter()).splitlines()


def _raised(error: Exception) -> Exception:
    try:
        try:
            raise error
        except psycopg.Error as exc:
            raise RuntimeError("Database error.") from exc
    except RuntimeError as wrapped:
        return wrapped


def test_a_connection_cut_is_said_once_a_minute_with_its_cause():
    cut = psycopg.OperationalError("connection failed: connection refused")

    def emit(logger):
        for _ in range(3):
            logger.error("listener error", exc_info=_raised(cut))

    assert _lines(emit) == [
        "ERROR tests.ops.logs: listener error "
        "(database unreachable: connection failed: connection refused)"
    ]


def test_the_pool_s_closed_connections_are_said_once_a_minute():
    # Each pooled connection the outage closed was a WARNING of its own as the pool found it.
    def emit(logger):
        for n in range(4):
            closed = f"<psycopg.AsyncConnection [BAD] at 0x{n}>"
            logger.handle(
                logging.LogRecord(
                    "psycopg.pool", logging.WARNING, __file__, 1,
                    "discarding closed connection: %s", (closed,), None,
                )
            )  # fmt: skip

    assert _lines(emit) == [
        "WARNING psycopg.pool: discarding closed connection: <psycopg.AsyncConnection [BAD] at 0x0>"
    ]


def test_a_turns_line_and_a_query_error_are_kept_whole():
    cut = psycopg.OperationalError("connection failed: connection refused")
    timeout = psycopg.errors.QueryCanceled("canceling statement due to statement timeout")

    def emit(logger):
        with bound(turn_id="t-1"):
            logger.warning("save failed", exc_info=_raised(cut))
            logger.warning("save failed", exc_info=_raised(cut))
        logger.error("a slow query", exc_info=_raised(timeout))

    lines = _lines(emit)
    said = [line for line in lines if line.startswith(("WARNING", "ERROR"))]
    assert (
        said[:2]
        == [
            "WARNING tests.ops.logs: save failed "
            "(database unreachable: connection failed: connection refused) [turn t-1]",
        ]
        * 2
    )
    assert said[2] == "ERROR tests.ops.logs: a slow query"
    assert "Traceback" in "\n".join(lines)  # a query's own failure keeps its traceback


def test_the_next_line_a_minute_on_counts_those_left_out(monkeypatch):
    now = [0.0]
    monkeypatch.setattr("ops.logs.time", SimpleNamespace(monotonic=lambda: now[0]))
    cut = psycopg.OperationalError("connection failed: connection refused")

    def emit(logger):
        for now[0] in (0.0, 10.0, 59.0, 61.0, 62.0):  # a clock of the test's own
            logger.error("listener error", exc_info=_raised(cut))

    said = "ERROR tests.ops.logs: listener error (database unreachable: connection failed: "
    assert _lines(emit) == [
        said + "connection refused)",
        said + "connection refused) (2 more like it left out since the last such line)",
    ]
