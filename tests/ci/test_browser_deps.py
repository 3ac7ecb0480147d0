"""`make test` on a fresh machine: the browser tests' packages are installed or asked for."""

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "browser-deps"


def _shim(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def test_without_root_it_stops_with_the_one_command_to_run(tmp_path):
    _shim(tmp_path, "id", "echo 1000")  # not root
    _shim(tmp_path, "fc-list", "true")  # no CJK fonts
    env = {**os.environ, "PATH": f"{tmp_path}:/usr/bin:/bin"}

    done = subprocess.run([str(SCRIPT)], env=env, capture_output=True, text=True, check=False)

    assert done.returncode == 1
    assert "sudo apt-get install -y chromium fonts-noto-cjk" in done.stderr


def test_with_everything_installed_it_passes_quietly(tmp_path):
    _shim(tmp_path, "fc-list", "echo 'Noto Sans CJK SC'")
    _shim(tmp_path, "chromium", "true")
    env = {**os.environ, "PATH": f"{tmp_path}:/usr/bin:/bin"}

    done = subprocess.run([str(SCRIPT)], env=env, capture_output=True, text=True, check=False)

    assert (done.returncode, done.stderr) == (0, "")
