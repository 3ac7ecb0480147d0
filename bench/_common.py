"""Bench-only helpers of the chat benchmarks: percentiles and tables, a throwaway database.

The live server and the scripted model server are shared with the tests: see the
`testing_support` package (importable here because the repository root is on sys.path).
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # testing_support


# --- numbers -------------------------------------------------------------------------------


def pct(values: list[float], p: float) -> float:
    """The p-th percentile (linear interpolation); NaN when there are no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def ms(seconds: float) -> str:
    return "n/a" if seconds != seconds else f"{seconds * 1000:.2f}"


def summary_row(name: str, seconds: list[float], goal: str = "") -> str:
    """A Markdown row: name, n, p50, p95, p99, max (ms), goal."""
    cells = [name, str(len(seconds))]
    cells += [ms(pct(seconds, p)) for p in (50, 95, 99)]
    cells += [ms(max(seconds)) if seconds else "n/a", goal]
    return "| " + " | ".join(cells) + " |"


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


SUMMARY_HEAD = (
    "| measure | n | p50 ms | p95 ms | p99 ms | max ms | goal |\n|---|---|---|---|---|---|---|"
)


def machine_note(load: float) -> str:
    """Date, cores, CPU, Python, and the 1-minute load average when the bench started."""
    cpu = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return (
        f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores ({cpu}), Python "
        f"{sys.version.split()[0]}; the bench client and model server share the machine "
        f"with daphne and PostgreSQL; load average {load:.1f} at the start"
    )


def raise_nofile(limit: int = 16384) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


# --- database --------------------------------------------------------------------------------


@contextlib.contextmanager
def bench_database() -> Iterator[str]:
    """Yield the URL of a migrated, throwaway PostgreSQL; stop and delete it afterwards."""
    from config.database import embedded_server

    root = Path(tempfile.mkdtemp(prefix="docent-bench-pg-"))
    server = embedded_server(root / "data", cleanup_mode="delete")
    try:
        url = server.get_uri()
        env = {**os.environ, "DATABASE_URL": url, "DJANGO_DEBUG": "true", "LOG_LEVEL": "WARNING"}
        subprocess.run(  # noqa: S603
            [PY, "manage.py", "migrate", "--verbosity", "0"],
            cwd=ROOT,
            env=env,
            check=True,
            timeout=300,
        )
        yield url
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


def sql(url: str, statement: str, params: tuple = ()) -> list[tuple]:
    """Run one statement on the bench database (autocommit) and return its rows, if any."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute(statement, params or None)  # no params: "%" is literal
        return cur.fetchall() if cur.description else []


def bench_server(
    database_url: str, model_url: str, spool_dir: Path, name: str = "daphne", **options
):
    """A production-mode LiveServer against the bench database and model server."""
    from testing_support.live_server import LiveServer

    env = {"OPENAI_BASE_URL": model_url, "OPENAI_API_KEY": "bench", "AGENT_MODEL": "bench"}
    env |= options.pop("env", {})
    return LiveServer(
        name, database_url, env, spool_dir, production=True, log_dir=spool_dir, **options
    )


def process_tree_cpu(server) -> float:
    """CPU seconds used so far by this process and by `server` (a psutil process) with its
    children: under the shared machine's load, steadier than latency."""
    import psutil

    total = sum(psutil.Process().cpu_times()[:2])
    for process in (server, *server.children()):
        try:
            total += sum(process.cpu_times()[:2])
        except psutil.Error:  # a backend that ended meanwhile
            pass
    return total
