"""A local `make run` without DJANGO_SECRET_KEY signs with a key of its own, never a public one."""

import os
import stat
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.secret_key import dev_secret_key
from config.settings import BASE_DIR, DATA_DIR


def test_made_once_owner_only_and_kept(tmp_path):
    path = tmp_path / "data" / "secret_key"
    key = dev_secret_key(path)
    assert len(key) >= 50
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert dev_secret_key(path) == key  # the next start signs with the same key
    assert dev_secret_key(tmp_path / "other") != key
    assert sorted(p.name for p in path.parent.iterdir()) == ["secret_key"]  # no temporary left


def test_a_file_readable_by_others_is_narrowed(tmp_path):
    path = tmp_path / "secret_key"
    path.write_text("k" * 64)
    path.chmod(0o644)
    assert dev_secret_key(path) == "k" * 64
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_short_key_is_refused_not_used(tmp_path):
    path = tmp_path / "secret_key"
    path.write_text("short")
    with pytest.raises(ValueError, match="no usable secret key"):
        dev_secret_key(path)


def test_the_debug_server_signs_with_the_kept_key():
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SECRET_KEY", "DJANGO_DEBUG")}
    env.update(HOST="127.0.0.1", DJANGO_ALLOWED_HOSTS="")
    script = "from django.conf import settings; print('KEY', settings.DEBUG, settings.SECRET_KEY)"
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=BASE_DIR, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    line = next(line for line in result.stdout.splitlines() if line.startswith("KEY "))
    _, debug, key = line.split()
    assert debug == "True"
    assert "not-secret" not in key
    assert key == (DATA_DIR / "secret_key").read_text().strip()
    assert stat.S_IMODE((DATA_DIR / "secret_key").stat().st_mode) == 0o600


def test_a_link_in_its_place_is_refused_and_its_target_left_alone(tmp_path):
    # Followed, the link's target (any file of this user's) was the key signing every session,
    # and was made 0600: /etc/passwd under root.
    victim = tmp_path / "victim"
    victim.write_text("k" * 64)
    victim.chmod(0o644)
    path = tmp_path / "data" / "secret_key"
    path.parent.mkdir()
    path.symlink_to(victim)

    with pytest.raises(ValueError, match="no usable secret key"):
        dev_secret_key(path)
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644


def test_a_dangling_link_is_refused_in_words(tmp_path):
    path = tmp_path / "secret_key"
    path.symlink_to(tmp_path / "nowhere")  # the first start's link would fail on it

    with pytest.raises(ValueError, match="no usable secret key"):
        dev_secret_key(path)
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("kind", ["directory", "fifo", "binary"])
def test_what_is_not_a_key_file_is_refused_in_words(tmp_path, kind):
    path = tmp_path / "secret_key"
    {
        "directory": path.mkdir,
        "fifo": lambda: os.mkfifo(path),  # opened plainly, a FIFO held the start for ever
        "binary": lambda: path.write_bytes(b"\xff" * 80),
    }[kind]()

    with pytest.raises(ValueError, match="no usable secret key"):
        dev_secret_key(path)


def test_manage_py_says_it_in_one_line(tmp_path):
    # manage.py prints an ImproperlyConfigured as "docent: error: …" (config/errors.py); a
    # ValueError alone was a traceback.
    path = tmp_path / "secret_key"
    path.write_text("short")
    with pytest.raises(ImproperlyConfigured, match="delete it to make a new one"):
        dev_secret_key(path)
