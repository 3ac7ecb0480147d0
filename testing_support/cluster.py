"""A real local cluster for tests and the chaos bench: redis-server, N web processes, nginx.

    with LocalCluster(database_url, tmp_path, extra={...}, workers=2) as cluster:
        httpx.get(cluster.url + "/readyz")
        cluster.kill(0)       # kill -9 web process 0
        cluster.restart(0)

The same pieces as `make run WORKERS=N` (docent/cluster.py writes nginx's configuration for
both); PostgreSQL is the caller's (the test run's embedded server), and no task worker runs:
tests run jobs through the queue's own test mode or call the services.
"""

from __future__ import annotations

import secrets
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from testing_support.live_server import LiveServer, free_port


class LocalCluster:
    def __init__(
        self,
        database_url: str,
        tmp: Path,
        *,
        extra: dict | None = None,
        workers: int = 2,
        other_upstreams: tuple[int, ...] = (),
    ) -> None:
        self.tmp = tmp
        self.other_upstreams = other_upstreams  # ports of stand-ins nginx also balances over
        self.database_url = database_url
        self.redis_port = free_port()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}/ws/chat/"
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
        # As `make run WORKERS=N` does (docent.cluster.cluster_plan): nginx vouches for its
        # X-Forwarded-For with a secret, and a request straight to a worker's port is its peer's.
        # Without it the tests never ran the check the real cluster depends on.
        self.proxy_secret = (extra or {}).get(
            "DJANGO_TRUSTED_PROXY_SECRET"
        ) or secrets.token_urlsafe(24)
        env = {
            "REDIS_URL": self.redis_url,
            "DJANGO_TRUSTED_PROXIES": "1",
            "DJANGO_TRUSTED_PROXY_SECRET": self.proxy_secret,
            **(extra or {}),
        }
        spool = tmp / "spool"  # one host, so one spool directory shared by its processes
        self.webs = [
            LiveServer(f"cluster-web{n}", database_url, env, spool) for n in range(workers)
        ]
        self._redis: subprocess.Popen | None = None
        self._nginx: subprocess.Popen | None = None

    def __enter__(self) -> LocalCluster:
        try:
            self._start_redis()
            for web in self.webs:
                web.start()
            self._start_nginx()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def web_by_pid(self, pid: int) -> int:
        """Which web process (its index) has this pid."""
        return next(n for n, web in enumerate(self.webs) if web.process and web.pid == pid)

    def kill(self, index: int) -> None:
        """kill -9: no drain, no save, nothing."""
        web = self.webs[index]
        web.process.send_signal(signal.SIGKILL)
        web.process.wait(timeout=10)
        web.log.close()

    def terminate(self, index: int) -> None:
        """SIGTERM, as a process manager does on a deploy; returns at once."""
        self.webs[index].process.send_signal(signal.SIGTERM)

    def restart(self, index: int) -> None:
        web = self.webs[index]
        if web.process and web.process.poll() is None:
            web.stop()
        web.start()

    def stop(self) -> None:
        for process in (self._nginx,):
            if process and process.poll() is None:
                process.terminate()
                process.wait(timeout=10)
        for web in self.webs:
            web.stop()
        if self._redis and self._redis.poll() is None:
            self._redis.terminate()
            self._redis.wait(timeout=10)

    def _start_redis(self) -> None:
        data = self.tmp / "redis"
        data.mkdir(parents=True, exist_ok=True)
        command = [shutil.which("redis-server") or "redis-server", "--bind", "127.0.0.1"]
        command += ["--port", str(self.redis_port), "--appendonly", "yes", "--dir", str(data)]
        command += ["--save", "", "--loglevel", "warning"]
        self._redis = subprocess.Popen(command, stdout=subprocess.DEVNULL)  # noqa: S603
        _wait_for(lambda: _redis_answers(self.redis_port), "redis-server")

    def _start_nginx(self) -> None:
        from docent.cluster import nginx_conf, nginx_prepare

        prefix = self.tmp / "nginx"
        nginx_prepare(prefix)
        conf = prefix / "nginx.conf"
        conf.write_text(
            nginx_conf(
                prefix=prefix,
                web_ports=[*self.other_upstreams, *(web.port for web in self.webs)],
                host="127.0.0.1",
                port=self.port,
                proxy_secret=self.proxy_secret,
            )
        )
        nginx = shutil.which("nginx", path="/usr/sbin:/usr/bin:/sbin") or "nginx"
        command = [nginx, "-p", str(prefix), "-c", str(conf), "-e", "stderr"]
        self._nginx = subprocess.Popen([*command, "-g", "daemon off;"])  # noqa: S603
        _wait_for(lambda: _http_ok(self.url + "/healthz"), "nginx")


def _redis_answers(port: int) -> bool:
    import socket

    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def _wait_for(check, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start within {timeout:.0f} s")
        time.sleep(0.1)
