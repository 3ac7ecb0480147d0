"""`make run` on a fresh clone: the install says what it is doing before pip goes quiet."""

import shutil
import subprocess
import sys
import tomllib
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


def test_the_editable_install_is_a_plain_path_entry_with_no_banner():
    # pip 26 relays the build backend's warnings, and a first `make setup` printed setuptools'
    # "Please be careful with folders in your working directory with the same name as your
    # package" box: setuptools says it for its meta path finder, which it picks for a flat
    # layout unless `package-dir` maps the root (then a plain .pth entry, and no box).
    # setuptools' own rule (command/editable_wheel.py, `_select_strategy`) on our config:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {"": "."}
    for pattern in config["packages"]["find"]["include"]:
        package = pattern.rstrip("*")
        assert (ROOT / package / "__init__.py").is_file(), package
