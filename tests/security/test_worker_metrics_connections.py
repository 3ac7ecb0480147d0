"""The task worker's own /metrics (ops/worker_metrics.py) cannot be held open by its callers.

It listens on `0.0.0.0` in a pod, for the scraper, so anything on that network reaches it. It
gave every connection a thread of the worker's process and waited for the request without
end: connections that sent half a request line, or nothing, each kept a thread (and its
stack) for ever, the threads of the process that runs indexing, turn recovery and the spool.
"""

import os
import socket
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from django.db import connection

from testing_support.live_server import database_url, free_port
from testing_support.waits import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
HELD = 200


def threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("Threads:")).split()[1])


def scraped(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).status_code == 200
    except httpx.TransportError:  # not listening yet
        return False


def closed_by_server(held: socket.socket) -> bool:
    held.setblocking(False)
    try:
        return held.recv(1) == b""
    except BlockingIOError:  # still open, nothing to read
        return False
    except OSError:  # reset
        return True


def test_idle_connections_do_not_hold_the_workers_threads():
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url(connection.settings_dict["NAME"]),
        "WORKER_METRICS_PORT": str(port),
        "HTTP_HEAD_SECONDS": "2",
    }
    worker = subprocess.Popen(  # noqa: S603
        [sys.executable, "manage.py", "worker"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: scraped(port), "the worker serves its metrics", seconds=120)
        before = threads(worker.pid)
        with ExitStack() as stack:
            held = []
            for _ in range(HELD):  # half a request line each, never finished
                client = stack.enter_context(socket.create_connection(("127.0.0.1", port)))
                client.sendall(b"GET /metr")
                held.append(client)
            during = threads(worker.pid)
            wait_until(
                lambda: all(closed_by_server(client) for client in held),
                "the worker closed every held connection",
                seconds=60,
            )
        answered = scraped(port)
    finally:
        worker.terminate()
        worker.wait(timeout=60)

    # Before: a thread per held connection (before + 200), none of them ever closed.
    assert during - before <= 40, (before, during)
    assert answered
