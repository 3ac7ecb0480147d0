"""Search at 100k chunks with PostgreSQL's default 128 MB `shared_buffers` against the embedded
server's sized setting, alternating on one database in one run.

    python bench/search_buffers.py [--chunks 100000] [--queries 50] [--rounds 4]

It builds the database of bench/search_scale.py (same corpus, same indexes), then runs the
same queries in rounds, restarting the server between blocks with the old and the new
setting in turn (old, new, new, old, ...). After each restart the search's relations are
loaded with pg_prewarm as far as the buffers hold them, and 20 searches warm the connection,
so both settings start from the same state; the OS cache stays warm throughout. Reported:
p50/p95 of the whole hybrid search for each setting, new/old, the pages each search had to
copy in from the OS (`blks_read`), the CPU each search cost (the server's processes and this
one, from /proc), and whether both settings gave the same hits.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import search_scale  # noqa: E402
from _common import process_tree_cpu  # noqa: E402
from _django import django_start, machine_note, percentile, table  # noqa: E402

OLD = 128  # MB: PostgreSQL's default, what the embedded server ran with before
RELATIONS = (
    "blog_chunk",
    "chunk_embedding_hnsw_en",
    "chunk_embedding_hnsw_zh",
    "chunk_search_vector_gin",
    "blog_article",
)


def restart_with(megabytes: int) -> None:
    """Restart the bench's server with `shared_buffers` = `megabytes`, then prewarm."""
    import _django
    from django.db import connection

    from blog import parallel
    from config.database import embedded_restart

    with connection.cursor() as cursor:
        cursor.execute(f"ALTER SYSTEM SET shared_buffers = '{int(megabytes)}MB'")
    connection.close()
    parallel.close()
    embedded_restart(_django._server)
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        cursor.execute(
            "SELECT reltoastrelid::regclass::text FROM pg_class WHERE relname = %s", ["blog_chunk"]
        )
        toast = cursor.fetchone()[0]
        for relation in (*RELATIONS, toast):
            cursor.execute("SELECT pg_prewarm(%s)", [relation])


def cpu_seconds() -> float:
    """CPU used so far by the server's processes and this one: under load, steadier than latency."""
    import _django
    import psutil

    return process_tree_cpu(psutil.Process(_django._server.get_pid()))


def blocks_read() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT blks_read FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=50, help="per block")
    parser.add_argument("--rounds", type=int, default=4)
    args, _ = parser.parse_known_args()
    django_start()
    from config.database import embedded_shared_buffers_mb

    new = embedded_shared_buffers_mb()
    rng = np.random.default_rng(42)
    search_scale.drop_indexes()
    centres, words, _ = search_scale.load(args.chunks, rng)
    search_scale.build_indexes()
    workload = search_scale.queries(rng, centres, words, args.queries * args.rounds)
    load_start = os.getloadavg()[0]
    latencies = {OLD: [], new: []}
    reads = {OLD: 0, new: 0}
    cpu = {OLD: 0.0, new: 0.0}
    hits: dict[int, dict[int, list[int]]] = {OLD: {}, new: {}}
    for round_ in range(args.rounds):
        block = workload[round_ * args.queries : (round_ + 1) * args.queries]
        for megabytes in (OLD, new) if round_ % 2 == 0 else (new, OLD):
            restart_with(megabytes)
            search_scale.timed_searches(
                workload[-20:]
            )  # warm the connection and the side connection
            before, cpu_before = blocks_read(), cpu_seconds()
            seconds, found = search_scale.timed_searches(block)
            cpu[megabytes] += cpu_seconds() - cpu_before
            reads[megabytes] += blocks_read() - before
            latencies[megabytes] += seconds
            for i, ids in enumerate(found):
                hits[megabytes][round_ * args.queries + i] = ids
    same = sum(hits[OLD][i] == hits[new][i] for i in hits[OLD])
    ms = lambda values, p: percentile(values, p) * 1000  # noqa: E731
    rows = [
        [
            f"shared_buffers {mb} MB",
            f"{ms(latencies[mb], 50):.2f}",
            f"{ms(latencies[mb], 95):.2f}",
            f"{ms(latencies[mb], 50) / ms(latencies[OLD], 50):.2f}",
            f"{ms(latencies[mb], 95) / ms(latencies[OLD], 95):.2f}",
            f"{reads[mb] / len(latencies[mb]):.0f}",
            f"{cpu[mb] * 1000 / len(latencies[mb]):.1f}",
            f"{cpu[mb] / cpu[OLD]:.2f}",
        ]
        for mb in (OLD, new)
    ]
    print(
        table(
            [
                "hybrid top-10",
                "p50 ms",
                "p95 ms",
                "/ old p50",
                "/ old p95",
                "pages from OS",
                "CPU ms",
                "/ old CPU",
            ],
            rows,
        )
    )
    print(
        f"\n{args.chunks:,} chunks; {args.rounds} rounds of {args.queries} queries per setting, "
        f"alternating; same hits on {same} of {len(hits[OLD])} queries. Load average at the "
        f"start {load_start:.1f}, at the end {os.getloadavg()[0]:.1f}. {machine_note()}."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
