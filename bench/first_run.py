"""A fresh clone's first `make run`, after the install: seconds until the site answers HTTP,
and until the demo articles are indexed in the background.

    .venv/bin/python bench/first_run.py

Runs `manage.py serve` exactly as `make run` does, against a new embedded PostgreSQL in a
temporary directory (initdb, migrations, demo articles, queued indexing), then stops it.
Goal: HTTP within 10 s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from _common import ROOT, markdown_table

sys.path.insert(0, str(ROOT))

from testing_support.live_server import free_port  # noqa: E402


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:  # noqa: S310
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="docent-first-run-"))
    port = free_port()
    env = {
        **os.environ,
        "EMBEDDED_PG_DATA": str(root / "postgres"),
        "AGENT_SPOOL_DIR": str(root / "spool"),
    }
    env.pop("DATABASE_URL", None)
    log = root / "serve.log"
    command = [sys.executable, "manage.py", "serve", "--port", str(port)]
    started = time.monotonic()
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)  # noqa: S603
    try:
        while not answers(f"http://127.0.0.1:{port}/"):
            time.sleep(0.1)
        http = time.monotonic() - started
        while "14/14" not in log.read_text():
            time.sleep(0.2)
        indexed = time.monotonic() - started
    finally:
        process.terminate()
        process.wait(timeout=60)
        shutil.rmtree(root, ignore_errors=True)
    rows = [
        ["site answers HTTP", f"{http:.1f}", "<= 10"],
        ["demo articles indexed (background)", f"{indexed:.1f}", ""],
    ]
    print(markdown_table(["first `make run`, after the install", "seconds", "goal"], rows))


if __name__ == "__main__":
    main()
