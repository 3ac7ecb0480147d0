"""CPU time and memory of a process (and its children) from /proc, for the benches."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of `pid` so far (all its threads); 0 once it is gone."""
    with contextlib.suppress(OSError, IndexError, ValueError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS
    return 0.0


def rss_bytes(pid: int) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def run_queue_seconds(pid: int) -> float:
    """Time the main thread was runnable but waiting for a CPU (schedstat)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    return float("nan")


def children(pid: int) -> list[int]:
    """Every descendant of `pid` (nginx workers, postgres backends)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            with contextlib.suppress(OSError):
                kids = [int(x) for x in (task / "children").read_text().split()]
                found += kids
                todo += kids
    return found


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of `pid` and its living descendants."""
    return sum(cpu_seconds(p) for p in [pid, *children(pid)])
