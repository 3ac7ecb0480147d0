"""The secret key of a local `make run` (DEBUG on) that names none: made once, kept in `.data/`.

A fixed default was public (it is in this repository): anyone could sign a session, a
password-reset token or a digest for a local server that ran with it. The key is random now,
written readable by its owner only, and the same on every later start, so sessions last.
"""

import os
import secrets
import tempfile
from pathlib import Path

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
    with open(path) as handle:
        if os.stat(handle.fileno()).st_mode & 0o077:
            os.fchmod(handle.fileno(), MODE)  # an older or copied file: the owner's only
        key = handle.read().strip()
    if len(key) < 50:
        raise ValueError(f"{path} holds no usable secret key; delete it to make a new one")
    return key
