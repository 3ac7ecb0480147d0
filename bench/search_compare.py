"""Two code trees' searches against one 100k database, alternating: latency, CPU and hits.

    BENCH_DATA_DIR=DIR python bench/search_compare.py --old TREE [--new TREE]
        [--chunks 100000] [--queries 200] [--block 50] [--modes hybrid,vector,text]

TREE is a checkout or a plain export of the repository (`git archive main | tar -x -C TREE`);
--new defaults to this one. --old-sql and --new-sql run before each block of that side, for a
change to the schema (an index one side has: `DROP INDEX IF EXISTS ...` / `CREATE INDEX IF NOT
EXISTS ...`). The database is bench/search_scale.py's, built once and kept in
BENCH_DATA_DIR. The same queries run in blocks, each block in a fresh process of the old tree
and then of the new one (the order flips every block), all against the one server, so both
sides see the same load, the same cache and the same data. Reported per side and mode: p50 and
p95 of the whole search, CPU per search (this server's processes and the searching process,
from /proc: under the shared machine's load it moves far less than latency), the load average,
and how many searches gave identical hits with identical evidence (`SearchHit.as_dict()`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import process_tree_cpu  # noqa: E402

HERE = Path(__file__).resolve().parent.parent


def child(tree: Path, workload_file: Path, mode: str, start: int, stop: int) -> None:
    """Run searches [start, stop) of the workload with `tree`'s code; print JSON results."""
    sys.path.insert(0, str(tree))
    os.chdir(tree)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django
    import psutil

    django.setup()
    import search_scale

    workload = json.loads(workload_file.read_text())
    warm = [tuple(item) for item in workload[-20:]]
    block = [tuple(item) for item in workload[start:stop]]
    search_scale.timed_searches(warm, mode=mode)  # the vocabulary, the side connection
    server = psutil.Process(int(os.environ["BENCH_SERVER_PID"]))
    before = process_tree_cpu(server)
    latencies, hits = search_scale.timed_searches(block, keep=lambda hit: hit.as_dict(), mode=mode)
    cpu = process_tree_cpu(server) - before
    print(json.dumps({"latencies": latencies, "hits": hits, "cpu": cpu}, default=str))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True)
    parser.add_argument("--new", type=Path, default=HERE)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200, help="per mode and side")
    parser.add_argument("--block", type=int, default=50)
    parser.add_argument("--modes", default="hybrid,vector,text")
    parser.add_argument("--old-sql", default="", help="run before each old block (DDL)")
    parser.add_argument("--new-sql", default="", help="run before each new block (DDL)")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args, _ = parser.parse_known_args()
    if args.child:
        tree, workload, mode, start, stop = args.child
        child(Path(tree), Path(workload), mode, int(start), int(stop))
        return 0
    if not os.environ.get("BENCH_DATA_DIR"):
        raise SystemExit("set BENCH_DATA_DIR: the database is built once and reused")
    import numpy as np
    from _django import django_start, machine_note, percentile, table

    django_start()
    import _django
    import search_scale

    rng = np.random.default_rng(42)
    centres, words, _, _ = search_scale.corpus_database(args.chunks, rng)
    workload = search_scale.queries(rng, centres, words, args.queries + 20)
    note = machine_note()
    from django.db import connection

    connection.close()
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    results = {(side, mode): [] for side in trees for mode in args.modes.split(",")}
    loads: list[float] = [os.getloadavg()[0]]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(workload, handle)
    env = os.environ | {
        "DATABASE_URL": _django._server.get_uri(),
        "BENCH_SERVER_PID": str(_django._server.get_pid()),
    }
    for number, start in enumerate(range(0, args.queries, args.block)):
        stop = min(start + args.block, args.queries)
        for mode in args.modes.split(","):
            for side in ("old", "new") if number % 2 == 0 else ("new", "old"):
                _prepare(getattr(args, f"{side}_sql"))
                command = [sys.executable, __file__, "--old", str(args.old), "--child"]
                command += [str(trees[side]), handle.name, mode, str(start), str(stop)]
                done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=HERE)
                if done.returncode:
                    sys.stderr.write(done.stderr)
                    raise SystemExit(f"{side} {mode} block {start} failed")
                results[side, mode].append(json.loads(done.stdout.splitlines()[-1]))
        loads.append(os.getloadavg()[0])
    _prepare(args.new_sql)  # the kept database is left as this tree's migrations made it
    os.unlink(handle.name)
    rows = []
    for mode in args.modes.split(","):
        old = _merged(results["old", mode])
        new = _merged(results["new", mode])
        same = sum(a == b for a, b in zip(old["hits"], new["hits"], strict=True))
        for side, data in (("old", old), ("new", new)):
            p50 = percentile(data["latencies"], 50) * 1000
            p95 = percentile(data["latencies"], 95) * 1000
            base50 = percentile(old["latencies"], 50) * 1000
            base95 = percentile(old["latencies"], 95) * 1000
            cpu = data["cpu"] * 1000 / len(data["latencies"])
            rows.append(
                [
                    f"{mode}, {side}",
                    f"{p50:.2f} / {p95:.2f}",
                    f"{p50 / base50:.2f} / {p95 / base95:.2f}",
                    f"{cpu:.1f}",
                    f"{data['cpu'] / old['cpu']:.2f}",
                    f"{same} / {len(old['hits'])}",
                ]
            )
    headers = ["100k chunks", "p50 / p95 ms", "/ old", "CPU ms per search", "/ old CPU"]
    print(table([*headers, "identical hits and evidence"], rows))
    print(
        f"\n{args.chunks:,} chunks; {args.queries} queries per mode and side in blocks of "
        f"{args.block}, old and new alternating, each block in a fresh process. Load average "
        f"{min(loads):.1f}–{max(loads):.1f} (start {loads[0]:.1f}, end {loads[-1]:.1f}). {note}."
    )
    return 0


def _prepare(sql: str) -> None:
    """Put the database in a side's state (an index it has and the other lacks)."""
    if not sql:
        return
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(sql)
    connection.close()


def _merged(blocks: list[dict]) -> dict:
    return {
        "latencies": [x for block in blocks for x in block["latencies"]],
        "hits": [x for block in blocks for x in block["hits"]],
        "cpu": sum(block["cpu"] for block in blocks),
    }


if __name__ == "__main__":
    sys.exit(main())
