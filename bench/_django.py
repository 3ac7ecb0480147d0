"""Shared set-up for the Django benchmarks: a throwaway embedded PostgreSQL, migrated.

    from _django import django_start
    django_start()          # before importing models

It starts PostgreSQL 18 + pgvector in a temporary directory exactly as tests/embedded_db.py
does (deleted when the process exits), points DATABASE_URL at it, runs django.setup() and
migrates quietly. `.data/` and any DATABASE_URL already set are left alone.

With `BENCH_DATA_DIR` set, the server's data lives there and is kept when the process exits,
so a bench that takes minutes to build its database (bench/search_scale.py at 100k chunks) can
reuse it in the next run.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_server = None  # keeps the embedded server alive as long as the process


def django_start() -> None:
    """Start a private PostgreSQL, configure Django against it and migrate."""
    global _server
    sys.path.insert(0, str(ROOT))
    from config.database import embedded_server

    kept = os.environ.get("BENCH_DATA_DIR")
    if kept:
        _server = embedded_server(Path(kept).resolve(), cleanup_mode="stop")
    else:
        root = Path(tempfile.mkdtemp(prefix="docent-bench-pg-"))
        # Registered first, so it runs last: after the server's own exit handler deleted its data.
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        _server = embedded_server(root / "data", cleanup_mode="delete")  # as `make run` sizes it
    os.environ["DATABASE_URL"] = _server.get_uri()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")

    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


@contextlib.contextmanager
def reindex_signals_off() -> Iterator[None]:
    """Save articles without queueing background reindex jobs (the bench times its own)."""
    from django.db.models.signals import post_save

    from blog.models import Article

    uid = "blog.article_reindex_on_save"
    post_save.disconnect(sender=Article, dispatch_uid=uid)
    try:
        yield
    finally:
        from blog.signals import article_saved

        post_save.connect(article_saved, sender=Article, dispatch_uid=uid)


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile with linear interpolation."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def machine_note() -> str:
    """Date, CPU count and versions, for the line under each table."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('server_version'), extversion FROM pg_extension "
            "WHERE extname = 'vector'"
        )
        pg, vector = cursor.fetchone()
    return (
        f"{dt.date.today().isoformat()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, PostgreSQL {pg.split()[0]}, pgvector {vector}"
    )
