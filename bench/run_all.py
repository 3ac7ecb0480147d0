"""`make bench`: run every benchmark in bench/, one after another, each printing its tables.

    python bench/run_all.py [--quick]     # --quick: smaller runs of each, for a smoke test

Each benchmark is its own process, so one that fails (or a peer framework that will not
import) does not take the others down; the exit code says whether all of them ran.
"""

import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ORDER = [
    "loop_overhead.py",
    "retrieval_quality.py",
    "answer_quality.py",
    "reindex_throughput.py",
    "search_scale.py",
    "chat_latency.py",
    "chat_load.py",
]


def main() -> int:
    scripts = [BENCH / name for name in ORDER if (BENCH / name).exists()]
    scripts += sorted(
        p
        for p in BENCH.glob("*.py")
        if p.name not in ORDER and not p.name.startswith("_") and p.name != "run_all.py"
    )
    failed = []
    for script in scripts:
        print(f"\n## {script.stem}  ({time.strftime('%Y-%m-%d %H:%M')})\n", flush=True)
        started = time.monotonic()
        quick = ["--quick"] if "--quick" in sys.argv[1:] and _takes_quick(script) else []
        result = subprocess.run([sys.executable, str(script), *quick], cwd=BENCH.parent)
        print(
            f"\n_{script.name}: {time.monotonic() - started:.0f} s, exit {result.returncode}_",
            flush=True,
        )
        if result.returncode:
            failed.append(script.name)
    if failed:
        print(f"\nFailed: {', '.join(failed)}")
    return 1 if failed else 0


def _takes_quick(script: Path) -> bool:
    return '"--quick"' in script.read_text(encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
