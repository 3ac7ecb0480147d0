"""prometheus-client's multiprocess mode, per process: no parent process owns the directory.

Each worker (a daphne of `make run WORKERS=N`, the task worker) writes its values to files
named after its pid in PROMETHEUS_MULTIPROC_DIR, and any worker's /metrics adds all files up.
Counters and histograms of processes that exited stay (so totals never go backwards when a
worker restarts); their live gauges are removed when the process exits, and, for a process
that was killed, by the next process start or scrape that finds its pid gone.
"""

import atexit
import contextlib
import os
import re
from pathlib import Path

from prometheus_client import REGISTRY, CollectorRegistry, multiprocess

_LIVE_GAUGE = re.compile(r"^gauge_live\w*?_(\d+)\.db$")


def directory() -> Path | None:
    value = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or os.environ.get("prometheus_multiproc_dir")
    return Path(value) if value else None


def directory_ensure() -> None:
    """Make the directory, this user's alone: prometheus-client writes its files 0644, and the
    counters in them (turns, votes, errors, by endpoint) are the operators' and nobody else's."""
    path = directory()
    if path is not None:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)


def process_start() -> None:
    """Prune what dead processes left and make this one remove its live gauges at exit."""
    path = directory()
    if path is None:
        return
    directory_ensure()
    dead_prune(path)
    atexit.register(multiprocess.mark_process_dead, os.getpid(), str(path))


def dead_prune(path: Path) -> None:
    """Remove the live-gauge files of processes that are gone (a SIGKILL skips atexit)."""
    for name in os.listdir(path):
        match = _LIVE_GAUGE.match(name)
        if match and not _alive(int(match.group(1))):
            multiprocess.mark_process_dead(int(match.group(1)), str(path))


def registry() -> CollectorRegistry:
    """The registry to expose: every process's values in multiprocess mode, else this one's."""
    path = directory()
    if path is None:
        return REGISTRY
    dead_prune(path)
    merged = CollectorRegistry()
    multiprocess.MultiProcessCollector(merged, path=str(path))
    return merged


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    with contextlib.suppress(OSError):
        # A zombie (exited, not yet reaped) still answers kill(0).
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    return True
