"""A real `manage.py serve` (daphne) in a subprocess, for browser, process-level and bench runs.

    with LiveServer("scripted", database_url, {"OPENAI_BASE_URL": ...}, spool_dir) as server:
        urllib.request.urlopen(server.url + "/")

`production=True` runs it as deployed (DEBUG off, a secret key, allowed hosts, limits out of
the way) for the benches; `command` replaces `manage.py serve` (another ASGI server on the
same app; `{port}` in it is the port). CPU and memory come from /proc (procstat.py).
"""

from __future__ import annotations

import http.client
import os
import random
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from testing_support import procstat

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"

# The benches are many visitors from one address with big budgets: limits must not interfere.
PRODUCTION = {
    "DJANGO_DEBUG": "false",
    "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
    "DJANGO_SECURE_SSL_REDIRECT": "false",
    "AGENT_MESSAGES_PER_MINUTE": "100000000",
    "AGENT_MESSAGES_PER_MINUTE_PER_IP": "100000000",
    "AGENT_MESSAGES_PER_DAY_PER_IP": "100000000",
    "AGENT_SOCKETS_PER_MINUTE_PER_IP": "100000000",
    "AGENT_FRAMES_PER_MINUTE_PER_IP": "100000000",
    "AGENT_FEEDBACK_PER_MINUTE_PER_IP": "100000000",
    "AGENT_TURNS_PER_IP": "100000000",
    "AGENT_TOKENS_PER_CONVERSATION": "1000000000",
    "AGENT_TOKENS_PER_DAY": "1000000000000",
    "AGENT_TOKENS_PER_IP_PER_DAY": "1000000000000",
    "LOG_LEVEL": "WARNING",
    "HTTP_CONNECTIONS_PER_IP": "100000000",
    "SEARCH_REQUESTS_PER_MINUTE_PER_IP": "100000000",
    "AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP": "100000000",
}


class LiveServer:
    """`manage.py serve --no-prepare` on a free port, until the block ends (then SIGTERM)."""

    def __init__(
        self,
        name: str,
        database_url: str,
        extra: dict,
        spool_dir: Path,
        *,
        production: bool = False,
        command: list[str] | None = None,
        log_dir: Path | None = None,
    ) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "DJANGO_DEBUG": "true",
            "PYTHONUNBUFFERED": "1",
            "AGENT_SPOOL_DIR": str(spool_dir),
            # Every test is a new visitor, but all come from 127.0.0.1.
            "AGENT_MESSAGES_PER_MINUTE": "1000",
            "AGENT_MESSAGES_PER_MINUTE_PER_IP": "1000",
            "AGENT_MESSAGES_PER_DAY_PER_IP": "100000",
            "AGENT_SOCKETS_PER_MINUTE_PER_IP": "1000",
            "AGENT_FRAMES_PER_MINUTE_PER_IP": "100000",
            "AGENT_FEEDBACK_PER_MINUTE_PER_IP": "1000",
            "AGENT_TURNS_PER_IP": "1000",
            "SEARCH_REQUESTS_PER_MINUTE_PER_IP": "1000",
            "AGENT_TRANSCRIPTS_PER_MINUTE_PER_IP": "1000",
            # The test process owns the data; a worker's periodic jobs would race its flushes.
            "TASK_WORKER_IN_PROCESS": "false",
            # Most live servers never search: loading the model at each start cost the suite
            # minutes of CPU. The first search loads it as before.
            "EMBEDDING_WARM_AT_START": "false",
        }
        if production:
            self.env |= PRODUCTION | {"DJANGO_SECRET_KEY": secrets.token_urlsafe(48)}
            for key in ("REDIS_URL", "EMBEDDING_BASE_URL", "EMBEDDING_API_KEY"):
                self.env.pop(key, None)
        self.env |= extra
        self.env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # the server keeps Django's checks
        for key in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
            if key not in extra:
                self.env.pop(key, None)
        serve = [sys.executable, "manage.py", "serve", "--no-prepare"]
        serve += ["--host", "127.0.0.1", "--port", "{port}"]
        self.command = [part.format(port=self.port) for part in command or serve]
        self.log_path = (log_dir or ARTIFACTS) / f"server-{self.name}.log"
        self.process: subprocess.Popen | None = None

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws/chat/"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def __enter__(self) -> LiveServer:
        return self.start()

    def start(self, timeout: float = 90) -> LiveServer:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(  # noqa: S603
            self.command, cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while not self._answers():
            if self.process.poll() is not None:
                raise RuntimeError(f"the {self.name} server exited; see {self.log_path}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the {self.name} server did not start; see {self.log_path}")
            time.sleep(0.2)
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM, as a process manager would; SIGKILL after `timeout`; the exit code."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.terminate()
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        self.log.close()  # a second stop() (the block's end) finds it closed: fine
        return code

    def output(self) -> str:
        if not self.log.closed:
            self.log.flush()
        return self.log_path.read_text()

    def rss_bytes(self) -> int:
        return procstat.rss_bytes(self.pid)

    def cpu_seconds(self) -> float:
        return procstat.cpu_seconds(self.pid)

    def _answers(self) -> bool:
        # Any answer counts (a DEBUG-off server redirects plain http); redirects not followed.
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
        try:
            connection.request("GET", "/", headers={"Host": "127.0.0.1"})
            return connection.getresponse().status < 500
        except (OSError, http.client.HTTPException):
            return False
        finally:
            connection.close()


def free_port() -> int:
    """A port that is free now and that no other test process will be handed before our
    server binds it.

    `bind(("", 0))` draws from the kernel's ephemeral range, and so does every other test
    process's scripted model server: a port probed and released here could be given to one of
    them before daphne bound it (a /metrics scrape once got "no route GET /metrics"). So the
    port comes from below that range, from a block of this xdist worker's own, at a random
    place in it (two runs on one machine rarely meet), and is never handed out twice.
    """
    block = _PORT_BLOCK * _worker_index()
    for _ in range(_PORT_BLOCK):
        port = _PORT_BASE + block + _random.randrange(_PORT_BLOCK)
        if port in _handed_out:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free port in {_PORT_BASE + block}..{_PORT_BASE + block + _PORT_BLOCK}")


_PORT_BASE, _PORT_BLOCK = 12000, 1200  # 16 workers end at 31200, below 32768 (Linux's default)
_handed_out: set[int] = set()
_random = random.Random()  # noqa: S311 - spreading ports, not a secret


def _worker_index() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")  # "gw3"; unset outside xdist
    return int(worker.removeprefix("gw") or 0) % 16


def database_url(name: str) -> str:
    """The test server's URL (tests/embedded_db.py) pointed at database `name`, for a subprocess."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + name))
