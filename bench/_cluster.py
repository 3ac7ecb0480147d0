"""`make run WORKERS=N` for bench/chat_load.py: the real cluster, measured process by process.

It runs `manage.py cluster` (what `make run WORKERS=N` runs: supervisord with release, redis,
nginx, N daphne web processes and the task worker) against the bench's database, with the
bench's model server and production settings, and finds each process under supervisord by
its command line. The bench connects through nginx, as a visitor would.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from _common import ROOT, sql
from _load_web import postmaster_pid

from testing_support.live_server import PRODUCTION, free_port
from testing_support.procstat import children, cpu_seconds, rss_bytes


class ClusterTier:
    """The cluster on a free port; `ws_url()` is always nginx's."""

    def __init__(
        self, *, workers: int, database_url: str, model_url: str, tmp: Path, env: dict[str, str],
        root: Path = ROOT,
    ) -> None:  # fmt: skip
        # `root`: another checkout (chat_load.py --baseline), run with its own .venv.
        self.root = root
        self.data = root / ".data" / "cluster"
        self.python = str(root / ".venv" / "bin" / "python") if root != ROOT else sys.executable
        self.workers = workers
        self.port = free_port()
        self.database_url = database_url
        self.log_path = ROOT / "test-artifacts" / f"bench-cluster-{self.port}.log"
        self.env = {
            **os.environ,
            **PRODUCTION,
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(48),
            "DATABASE_URL": database_url,
            "OPENAI_BASE_URL": model_url,
            "OPENAI_API_KEY": "bench",
            "AGENT_MODEL": "bench",
            "PYTHONUNBUFFERED": "1",
            "AGENT_SPOOL_DIR": str(tmp / f"spool-{self.port}"),
            **env,
        }
        self.env.pop("REDIS_URL", None)  # the cluster starts its own redis-server
        self.process: subprocess.Popen | None = None
        self.web_pids: list[int] = []
        self.web_ports: list[int] = []

    def __enter__(self) -> ClusterTier:
        (self.data / "ports.json").unlink(missing_ok=True)
        _one_draft(self.database_url)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(  # noqa: S603
                [self.python, "manage.py", "cluster", "--workers", str(self.workers)]
                + ["--host", "127.0.0.1", "--port", str(self.port)],
                cwd=self.root,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            self._wait_ready(timeout=180)
        except BaseException:
            # `with` calls __exit__ only after __enter__ returned: a cluster that never got
            # ready would otherwise keep running, its worker restarting against a gone database.
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # supervisord stops every program
            try:
                self.process.wait(90)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the cluster exited; see {self.log_path}")
            with contextlib.suppress(OSError, ValueError):
                ports = json.loads((self.data / "ports.json").read_text())["web"]
                pids = self._pids()
                webs = [pids.get(f"web {i + 1}") for i in range(len(ports))]
                if all(webs) and "worker" in pids and self._answers("/readyz"):
                    self.web_pids, self.web_ports = webs, ports
                    return
            time.sleep(0.5)
        raise RuntimeError(f"the cluster did not get ready; see {self.log_path}")

    def _answers(self, path: str) -> bool:
        url = f"http://127.0.0.1:{self.port}{path}"
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310
                return response.status == 200
        return False

    def _pids(self) -> dict[str, int]:
        """Program name -> pid, from the command lines of supervisord's children."""
        assert self.process is not None
        ports = json.loads((self.data / "ports.json").read_text())["web"]
        found: dict[str, int] = {}
        for pid in children(self.process.pid):
            with contextlib.suppress(OSError):
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                line = b" ".join(argv).decode(errors="replace")
                name = _program(line, ports)
                if name and name not in found:
                    found[name] = pid
        return found

    def ws_url(self) -> tuple[str, str]:
        base = f"127.0.0.1:{self.port}"
        return f"ws://{base}/ws/chat/", f"http://{base}"

    def rss_bytes(self) -> int:
        return sum(rss_bytes(pid) for pid in self.web_pids)

    @property
    def servers(self) -> list:
        return [_Pid(pid) for pid in self.web_pids]

    def groups(self, database_url: str) -> dict[str, list[int]]:
        found = {name: [pid] for name, pid in sorted(self._pids().items())}
        with contextlib.suppress(Exception):
            found["postgres"] = [postmaster_pid(database_url)]
        return found

    def settle(self, timeout: float = 900) -> None:
        """Wait until the task queue is empty (the first run indexes the demo articles, which
        would take CPU from the streams), then until the worker is idle."""
        query = "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')"
        deadline = time.monotonic() + timeout
        quiet = 0
        while time.monotonic() < deadline and quiet < 3:
            with contextlib.suppress(Exception):
                quiet = quiet + 1 if sql(self.database_url, query)[0][0] == 0 else 0
            time.sleep(1.0)
        worker = self._pids().get("worker")
        while worker and time.monotonic() < deadline:
            before = sum(cpu_seconds(p) for p in (worker, *children(worker)))
            time.sleep(1.0)
            if sum(cpu_seconds(p) for p in (worker, *children(worker))) - before < 0.05:
                return


def _one_draft(database_url: str) -> None:
    """A draft article, so the release step does not load and index the demo articles (minutes
    of the task worker's CPU on a small machine; the scripted model calls no tools)."""
    with contextlib.suppress(Exception):
        sql(
            database_url,
            "INSERT INTO blog_article (title, slug, summary, body, status, published_at, "
            "created_at, updated_at, index_hash) SELECT 'Bench', 'bench', '', 'Bench.', "
            "'draft', now(), now(), now(), '' WHERE NOT EXISTS (SELECT 1 FROM blog_article)",
        )


class _Pid:
    def __init__(self, pid: int) -> None:
        self.pid = pid


def _program(line: str, web_ports: list[int]) -> str | None:
    if "nginx" in line and "master" in line or line.startswith("nginx"):
        return "nginx"
    if "redis-server" in line:
        return "redis"
    if "manage.py worker" in line:
        return "worker"
    if "manage.py serve" in line:
        for number, port in enumerate(web_ports, start=1):
            if f"--port {port}" in line:
                return f"web {number}"
    return None
