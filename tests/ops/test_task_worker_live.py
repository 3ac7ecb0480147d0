"""The cluster's task worker (`manage.py worker`) through a database outage and a SIGTERM."""

import json
import os
import subprocess
import sys
import time

import pytest
from django.db import connection

from docent.selectors import queue_state
from docent.tasks import STALLED_WORKER_SECONDS
from ops.collectors import WORKER_HEARTBEAT_SECONDS
from testing_support.live_server import database_url, free_port
from testing_support.waits import wait_until
from tests.agent.test_persistence import DatabaseOutage
from tests.ops.prom import parse, scrape, value
from tests.ops.test_incidents_live import ROOT, _get, _queue_empty, _server

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_task_worker_stopped_by_a_database_outage_says_so_and_runs_again(tmp_path):
    """procrastinate stops its worker when its LISTEN connection dies, and `manage.py worker`
    then exited 0: in `make run WORKERS=2` a 20 s PostgreSQL stop left procrastinate's
    traceback, a restart supervisord logs only at INFO, docent_queue_workers at 0 for a while
    and docent_task_worker_restarts_total at 0 (it counted only the one-process server's)."""
    _queue_empty("index")  # other tests' indexing jobs would load the embedding model
    log = tmp_path / "worker.log"
    worker, scraped = _worker(log)

    try:
        wait_until(lambda: _workers() >= 1, "a worker", seconds=120)
        outage = DatabaseOutage()
        outage.begin()
        try:
            # procrastinate waits for its running jobs before it gives up: about a minute.
            wait_until(lambda: _said(log), "the worker noticed the outage", seconds=180)
        finally:
            outage.end()
            connection.close()
        back = lambda: value(scraped(), "docent_task_worker_restarts_total") >= 1  # noqa: E731
        wait_until(back, "the restart counted", seconds=60)
        wait_until(lambda: _workers() >= 1, "working again", seconds=90)
        alive_after_outage = worker.poll() is None
    finally:
        worker.terminate()
        status = worker.wait(timeout=60)

    assert alive_after_outage  # it ran its worker again itself, instead of exiting 0
    assert status == 0  # a SIGTERM still stops it, gracefully
    # "stopped" (WARNING) when procrastinate could still unregister it, "failed" (ERROR) when
    # the database was still down then, as here.
    (said, *_) = _said(log)
    assert said["logger"] == "docent.startup" and said["level"] in {"WARNING", "ERROR"}
    # In one line, its cause after it rather than a traceback (ops.logs.DatabaseDownFilter).
    assert said["message"].startswith(
        ("the task worker stopped; restarting in 5 s", "the task worker failed; restarting in 5 s")
    )


def _workers() -> int:
    """Task workers registered with a recent heartbeat (the worker's own /metrics has no
    database-read gauges: a web process's scrape reports docent_queue_workers)."""
    return queue_state(heartbeat_seconds=WORKER_HEARTBEAT_SECONDS).workers_alive


def _said(log) -> list[dict]:
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    starts = ("the task worker stopped", "the task worker failed")
    return [line for line in lines if line["message"].startswith(starts)]


def _worker(log, **settings: str) -> tuple[subprocess.Popen, object]:
    """`manage.py worker` writing JSON lines to `log`, and a function scraping its metrics."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url(connection.settings_dict["NAME"]),
        "WORKER_METRICS_PORT": str(port),
        "LOG_FORMAT": "json",
        **settings,
    }
    with log.open("w") as out:
        worker = subprocess.Popen(  # noqa: S603
            [sys.executable, "manage.py", "worker"], cwd=ROOT, env=env, stdout=out, stderr=out
        )

    def scraped() -> dict:
        reply = _get(f"http://127.0.0.1:{port}/metrics")
        return parse(reply.text) if reply is not None and reply.status_code == 200 else {}

    return worker, scraped


def test_a_killed_task_worker_is_counted_and_no_longer_counted_alive(tmp_path):
    """`kill -9` of the task worker, restarted a moment later as a supervisor does: nothing
    counted the death, and docent_queue_workers read 2 for a minute (the dead worker's row
    beside its replacement's); procrastinate prunes such a row only at a worker's start, once
    30 s silent, so a row the restart found fresh stayed until the next start."""
    _queue_empty("index")
    # A quarter of the default silence (a minute), so the test waits it out in seconds.
    silence = {"TASK_WORKER_STALLED_SECONDS": "15"}
    first, _ = _worker(tmp_path / "first.log", **silence)
    try:
        wait_until(lambda: _workers() >= 1, "a worker", seconds=120)
    finally:
        first.kill()  # SIGKILL: no unregistering
        first.wait(timeout=30)
    time.sleep(16)  # the dead worker's heartbeat silent past TASK_WORKER_STALLED_SECONDS
    log = tmp_path / "second.log"
    second, scraped = _worker(log, **silence)
    try:
        lost = lambda: value(scraped(), "docent_task_workers_lost_total") == 1  # noqa: E731
        # The replacement's start finds it (the stalled-job check each minute would too).
        wait_until(lost, "the dead worker found", seconds=200)
        # The prune that found it runs before the replacement registers itself: read at once,
        # the replacement was not counted yet (0 under load). Once it is, the dead one is not.
        wait_until(lambda: _workers() >= 1, "the replacement registered", seconds=120)
        alive = _workers()
    finally:
        second.terminate()
        second.wait(timeout=60)

    assert alive == 1  # the replacement alone
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    [said] = [line for line in lines if "died without stopping" in line["message"]]
    assert said["level"] == "WARNING" and said["logger"] == "docent.tasks"


def test_a_killed_task_workers_replacement_is_counted_alone_at_once(client, tmp_path):
    """After a `kill -9` and a supervisor's restart, docent_queue_workers read 2 for up to a
    minute: the dead worker's heartbeat stayed under the gauge's 60 s for that long."""
    _queue_empty("index")
    _workers_forget()
    first, _ = _worker(tmp_path / "first.log")
    try:
        wait_until(lambda: _workers() >= 1, "a worker", seconds=120)
        (dead,) = _worker_ids()
    finally:
        first.kill()  # SIGKILL: no unregistering
        first.wait(timeout=30)
    second, _ = _worker(tmp_path / "second.log")
    try:
        wait_until(lambda: len(_worker_ids()) == 2, "the replacement registered", seconds=120)
        alone = lambda: value(_metrics(client), "docent_queue_workers") == 1  # noqa: E731
        wait_until(alone, "the replacement counted alone", seconds=120)
        silent = _silent_seconds(dead)
    finally:
        second.terminate()
        second.wait(timeout=60)

    # Counted out while its row still stood and its heartbeat was younger than the stalled-job
    # rule's silence: the old gauge (60 s) counted it alive until then.
    assert silent is not None and silent < STALLED_WORKER_SECONDS


def _workers_forget() -> None:
    """No row left by an earlier test's workers (killed ones stay until pruned)."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM procrastinate_workers")


def _worker_ids() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM procrastinate_workers ORDER BY id")
        return [row[0] for row in cursor.fetchall()]


def _silent_seconds(worker_id: int) -> float | None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT extract(epoch FROM now() - last_heartbeat) FROM procrastinate_workers"
            " WHERE id = %s",
            [worker_id],
        )
        row = cursor.fetchone()
    return float(row[0]) if row else None


def _metrics(client) -> dict:
    return parse(client.get("/metrics").content.decode())


def test_the_one_process_servers_worker_says_a_dead_worker_as_it_starts(tmp_path):
    """`manage.py serve` runs its task worker in-process, and that one did not prune at
    start as `manage.py worker` does: a dead worker's row was removed by procrastinate's own
    prune, silently, and docent_task_workers_lost_total never counted it."""
    _queue_empty("index")
    _workers_forget()
    dead_worker, _ = _worker(tmp_path / "dead.log")
    try:
        wait_until(lambda: _workers() >= 1, "a worker", seconds=120)
        (dead,) = _worker_ids()
    finally:
        dead_worker.kill()
        dead_worker.wait(timeout=30)
    with connection.cursor() as cursor:  # silent for two minutes, without waiting them out
        cursor.execute(
            "UPDATE procrastinate_workers SET last_heartbeat = now() - interval '2 minutes'"
            " WHERE id = %s",
            [dead],
        )
    env = {"LOG_FORMAT": "json", "TASK_WORKER_IN_PROCESS": "true"}  # the live servers' is off
    with _server("serve-prunes", tmp_path, **env) as server:
        wait_until(lambda: dead not in _worker_ids(), "the dead row removed", seconds=120)
        lost = value(scrape(server.url), "docent_task_workers_lost_total")
        output = server.output()

    assert lost == 1
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    [said] = [line for line in lines if "died without stopping" in line["message"]]
    assert said["message"].startswith(f"task worker {dead} died without stopping")
    assert said["level"] == "WARNING" and said["logger"] == "docent.tasks"
