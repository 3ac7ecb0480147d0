"""The secret key of a local `make run` (DEBUG on) that names none: made once, kept in `.data/`.

A fixed default was public (it is in this repository): anyone could sign a session, a
password-reset token or a digest for a local server that ran with it. The key is random now,
written readable by its owner only, and the same on every later start, so sessions last.
"""

import errno
import os
import secrets
import stat
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

MODE = 0o600


def dev_secret_key(path: Path) -> str:
    """The key kept at `path`, made first if there is none."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written whole under another name, then linked: two processes starting together never read
    # a half-written key, and the first link wins (the other reads the winner's).
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".secret_key.")  # 0600
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(48))
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
    finally:
        os.unlink(temporary)
    return _read(path)


def _read(path: Path) -> str:
    # Not through a link, and only a file of this user's: a symbolic link at `path` was
    # followed, its target's words became the key that signs every session, and the target
    # (any file this user may change: /etc/passwd under root) was made 0600 by the line below.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # NONBLOCK: a FIFO
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise  # FileNotFoundError: made by the caller
        raise _unusable(path) from exc
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode) or status.st_uid != os.geteuid():
        os.close(fd)
        raise _unusable(path)
    with os.fdopen(fd, "rb") as handle:
        if status.st_mode & 0o077:
            os.fchmod(fd, MODE)  # an older or copied file: the owner's only
        try:
            key = handle.read(4096).decode().strip()
        except UnicodeDecodeError as exc:
            raise _unusable(path) from exc
    if len(key) < 50:
        raise _unusable(path)
    return key


class UnusableKey(ImproperlyConfigured, ValueError):
    """`manage.py` says it in one line (config/errors.py), not a traceback."""


def _unusable(path: Path) -> UnusableKey:
    return UnusableKey(
        f"{path} holds no usable secret key (50+ characters of text in a file of this user's, "
        "not a link); delete it to make a new one"
    )
