"""Which process holds a turn's lock, and whether it still runs.

A turn lock's token names its process: `<random>.<space>.<pid>`, where `space` says in which
machine boot and pid namespace that pid means one process. Another process of the same space
can then tell a holder that was killed (`kill -9`, the OOM killer) from one that is only slow:
the kernel says the pid is gone. A holder elsewhere (another host, pod or container) is never
judged: its lock ends with its lease (AGENT_LEASE_SECONDS), as before.

A killed web process's conversation answered "busy" until its lock's lease ran out: 20 to 30 s
(it is renewed every third of the lease), measured 22 s in `make run WORKERS=2`.
"""

import hashlib
import os
import uuid
from pathlib import Path


def _process_space() -> str:
    """This boot's id and this process's pid namespace, hashed ('' when either is unknown)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""
    return hashlib.sha256(f"{boot}/{namespace}".encode()).hexdigest()[:12]


SPACE = _process_space()


def holder_token() -> str:
    """A new lock token naming this process (a bare random one where no space is known)."""
    token = uuid.uuid4().hex
    return f"{token}.{SPACE}.{os.getpid()}" if SPACE else token


def holder_gone(token: str) -> bool:
    """True only when `token`'s process was of this space and no longer runs."""
    parts = token.split(".")
    if len(parts) != 3:
        return False
    return process_gone(space=parts[1], pid=parts[2])


def process_gone(*, space: str, pid: str) -> bool:
    """True only when process `pid` of `space` (another process's SPACE) no longer runs."""
    if not SPACE or space != SPACE or not pid.isdigit():
        return False
    return _pid_gone(int(pid))


def _pid_gone(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the pid exists
    except ProcessLookupError:
        return True
    except PermissionError:  # another user's process: it runs
        return False
    return _zombie(pid)


def _zombie(pid: int) -> bool:
    """A killed process its parent has not reaped yet still has its pid, but runs nothing."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] == "Z"
