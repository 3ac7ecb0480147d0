"""The web side of bench/chat_load.py: what serves the sockets, and the CPU of every process.

- `WebTier`: N web processes on their own ports (the Django app under daphne, uvicorn or
  granian, or the bare ASGI transport floor), the clients spread over them round-robin, or
  one nginx in front (`least_conn`, as `make run WORKERS=N` puts it) when `proxy` is set.
- `CpuMeter`: CPU seconds per named process group (web 1..N, nginx, postgres, the bench
  itself) between two samples, each group with its descendants (nginx workers, backends).
"""

from __future__ import annotations

import contextlib
import resource
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from _common import bench_server, sql

from testing_support.live_server import LiveServer, free_port
from testing_support.procstat import children, cpu_seconds, rss_bytes

BENCH = Path(__file__).resolve().parent
PY = sys.executable
# How each kind of web process is started; `{port}` is filled in by LiveServer.
COMMANDS = {
    "daphne": None,  # manage.py serve --no-prepare: daphne, as `make run` serves
    "uvicorn": [
        PY, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1", "--port",
        "{port}", "--loop", "uvloop", "--http", "httptools", "--ws", "websockets-sansio",
        "--no-access-log", "--lifespan", "off", "--log-level", "warning",
    ],
    "granian": [
        PY, "-m", "granian", "--interface", "asgi", "--host", "127.0.0.1", "--port", "{port}",
        "--no-ws-compression", "--log-level", "warning", "config.asgi:application",
    ],
    "bare": [PY, "-m", "daphne", "-b", "127.0.0.1", "-p", "{port}", "_bare_asgi:app"],
}  # fmt: skip


class WebTier:
    """`workers` web processes of one kind, optionally behind a local nginx."""

    def __init__(
        self, *, kind: str, workers: int, database_url: str, model_url: str, tmp: Path,
        env: dict[str, str], proxy: bool,
    ) -> None:  # fmt: skip
        self.kind = kind
        self.servers: list[LiveServer] = []
        for i in range(workers):
            server = bench_server(
                database_url, model_url, tmp, name=f"{kind}-{i + 1}-{free_port()}",
                command=COMMANDS[kind], env=env,
            )  # fmt: skip
            if kind == "bare":
                server.env["PYTHONPATH"] = str(BENCH)
            self.servers.append(server)
        self.nginx = Nginx(tmp, [s.port for s in self.servers]) if proxy else None
        self._next = 0

    def __enter__(self) -> WebTier:
        for server in self.servers:
            server.start()
        if self.nginx is not None:
            self.nginx.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.nginx is not None:
            self.nginx.stop()
        for server in self.servers:
            server.stop()

    def ws_url(self) -> tuple[str, str]:
        """(WebSocket URL, Origin) of the next connection."""
        if self.nginx is not None:
            port = self.nginx.port
        else:
            port = self.servers[self._next % len(self.servers)].port
            self._next += 1
        return f"ws://127.0.0.1:{port}/ws/chat/", f"http://127.0.0.1:{port}"

    def rss_bytes(self) -> int:
        return sum(rss_bytes(server.pid) for server in self.servers)

    def groups(self, database_url: str) -> dict[str, list[int]]:
        """Root pids per process group, for CpuMeter."""
        found = {f"web {i + 1}": [s.pid] for i, s in enumerate(self.servers)}
        if self.nginx is not None:
            found["nginx"] = [self.nginx.pid]
        with contextlib.suppress(Exception):
            found["postgres"] = [postmaster_pid(database_url)]
        return found


def postmaster_pid(database_url: str) -> int:
    [(directory,)] = sql(database_url, "SHOW data_directory")
    return int((Path(directory) / "postmaster.pid").read_text().split()[0])


class Nginx:
    """nginx on a free port: least_conn over the web ports, WebSocket upgrade, no buffering."""

    def __init__(self, tmp: Path, ports: list[int]) -> None:
        self.port = free_port()
        self.dir = tmp / f"nginx-{self.port}"
        self.ports = ports
        self.process: subprocess.Popen | None = None

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> None:
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        self.dir.mkdir(parents=True, exist_ok=True)
        upstreams = "\n".join(f"server 127.0.0.1:{port};" for port in self.ports)
        conf = self.dir / "nginx.conf"
        conf.write_text(
            textwrap.dedent(f"""
            daemon off; worker_processes 1; pid {self.dir}/nginx.pid;
            error_log {self.dir}/error.log warn;
            events {{ worker_connections 16384; }}
            http {{
              access_log off;
              upstream web {{ least_conn; {upstreams} keepalive 64; }}
              map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
              server {{
                listen 127.0.0.1:{self.port} backlog=4096;
                location / {{
                  proxy_pass http://web; proxy_http_version 1.1;
                  proxy_set_header Upgrade $http_upgrade;
                  proxy_set_header Connection $connection_upgrade;
                  proxy_set_header Host $host;
                  proxy_buffering off; proxy_read_timeout 300s;
                }}
              }}
            }}
            """)
        )
        self.process = subprocess.Popen(  # noqa: S603
            [binary, "-c", str(conf), "-p", str(self.dir), "-e", str(self.dir / "error.log")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.process.poll() is None:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                return
            time.sleep(0.05)
        raise RuntimeError(f"nginx did not start; see {self.dir / 'error.log'}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


class CpuMeter:
    """CPU seconds per group between `start()` and `stop()`; `bench` is this process."""

    def __init__(self, groups: dict[str, list[int]]) -> None:
        self.groups = groups
        self._start: dict[str, dict[int, float]] = {}
        self.seconds: dict[str, float] = {}

    def _sample(self) -> dict[str, dict[int, float]]:
        sample = {}
        for name, roots in self.groups.items():
            pids = [p for root in roots for p in (root, *children(root))]
            sample[name] = {pid: cpu_seconds(pid) for pid in pids}
        usage = resource.getrusage(resource.RUSAGE_SELF)
        sample["bench (clients + model)"] = {0: usage.ru_utime + usage.ru_stime}
        return sample

    def start(self) -> None:
        self._start = self._sample()

    def stop(self) -> dict[str, float]:
        end = self._sample()
        for name, pids in end.items():
            before = self._start.get(name, {})
            # A process born in the window counts from zero; one that died is not seen.
            self.seconds[name] = sum(t - before.get(pid, 0.0) for pid, t in pids.items())
        return self.seconds
