"""A real `manage.py serve` (daphne) in a subprocess, for browser and process-level tests."""

import http.client
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"


class LiveServer:
    """`manage.py serve --no-prepare` on a free port, until the block ends (then SIGTERM)."""

    def __init__(self, name: str, database_url: str, extra: dict, spool_dir: Path) -> None:
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
            **extra,
        }
        self.env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # the server keeps Django's checks
        for key in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
            if key not in extra:
                self.env.pop(key, None)

    def __enter__(self) -> "LiveServer":
        ARTIFACTS.mkdir(exist_ok=True)
        self.log_path = ARTIFACTS / f"server-{self.name}.log"
        self.log = open(self.log_path, "w")  # noqa: SIM115 - closed in __exit__
        command = [sys.executable, "manage.py", "serve", "--no-prepare"]
        command += ["--host", "127.0.0.1", "--port", str(self.port)]
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 90
        while not self._answers():
            if self.process.poll() is not None:
                raise RuntimeError(f"the {self.name} server exited; see {self.log_path}")
            if time.monotonic() > deadline:
                self.__exit__()
                raise RuntimeError(f"the {self.name} server did not start; see {self.log_path}")
            time.sleep(0.2)
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()
        self.log.close()

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM, as a process manager would; return the exit code."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def output(self) -> str:
        self.log.flush()
        return self.log_path.read_text()

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
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def database_url(name: str) -> str:
    """The test server's URL (tests/embedded_db.py) pointed at database `name`, for a subprocess."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + name))
