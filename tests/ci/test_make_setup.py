"""`make run` on a fresh clone: the install says what it is doing before pip goes quiet."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_first_install_says_what_it_does_before_the_quiet_pip_runs(tmp_path):
    # A fresh clone's `make run` printed only pip's command lines, then nothing for three
    # minutes (192 s measured) while `pip --quiet` installed, and a new user could not tell
    # work from a hang.
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    venv_python = tmp_path / ".venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.write_text('#!/bin/sh\necho "pip ran: $*"\n')  # stands in for pip: no network
    venv_python.chmod(0o755)

    done = subprocess.run(
        ["make", "--no-print-directory", "setup", f"PYTHON={sys.executable}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    said = next(i for i, line in enumerate(lines) if line.startswith("Installing Docent's"))
    first_pip = next(i for i, line in enumerate(lines) if line.startswith("pip ran:"))
    assert said < first_pip
    assert "a few minutes" in lines[said]
