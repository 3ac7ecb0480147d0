"""`chat_load.py --profile DIR`: py-spy stacks of web 1, phase by phase, and where its CPU went.

Each phase (`open`: sockets opened and turns started; `stream`: the streaming window the bench
meters; `save`: from the last `done` until every turn is saved) is one `py-spy record` of web 1,
without pausing it, written as raw collapsed stacks (`DIR/<mode>-<N>-<phase>.txt`). Idle threads
are not sampled, but a thread that is runnable while the machine is full is: so each phase's
samples give only the shares, and web 1's CPU seconds in the phase (from /proc) the sizes.
The summary puts each sample in the first bucket whose marker is on its stack,
most specific first, and prints the table the "Streaming at scale" section of docs/benchmarks.md
quotes.

    python bench/_profile.py DIR [N_TURNS_ON_WEB_1]   # the summary again, from the files
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

from _common import ROOT  # noqa: F401  (puts the repository root on sys.path)

from testing_support.procstat import cpu_seconds

RATE = 250  # samples per second

# (bucket, markers): a frame name or file that puts a sample in the bucket. Order matters:
# the first bucket with a marker anywhere on the stack wins.
BUCKETS: list[tuple[str, tuple[str, ...]]] = [
    ("checkpoints (thread + query)", ("turns_checkpoint", "Checkpointer.")),
    ("final save (thread + query)", ("turn_record", "TurnSaver.")),
    ("turn start: durable row, history", ("turn_prepare", "turn_start")),
    ("session row", ("session_ensure", "SessionStore", "SessionMiddleware")),
    ("Redis: limits, budget, lease", ("ratelimit.py", "leases.py", "shared.py", "redis/")),
    ("metrics and spans", ("ops/", "prometheus_client")),
    ("model stream in (aiohttp, SDK, parse)", ("openai_compat.py", "aiohttp/", "httpx")),
    ("frames out (coalesce, encode, daphne send)", ("coalesce.py", "send_json", "handle_reply")),
    ("handshake and consumer start", ("ws_protocol.py", "websocket.py", "middleware", "routing")),
    ("agent loop, runner", ("loop.py", "runner.py", "turns.py")),
    ("sync_to_async hops", ("asgiref/", "concurrent/futures")),
    ("database driver (other)", ("psycopg", "django/db")),
    ("garbage collection", ("<gc>",)),
    ("event loop, twisted, other", ("",)),
]


class Spy:
    """One `py-spy record` per phase of web 1."""

    def __init__(self, directory: Path, pid: int, name: str) -> None:
        self.directory, self.pid, self.name = directory, pid, name
        self.process: subprocess.Popen | None = None
        self.cpu: dict[str, float] = {}  # phase -> web 1's CPU seconds in it
        self._phase, self._since = "", 0.0
        directory.mkdir(parents=True, exist_ok=True)

    def phase(self, phase: str) -> None:
        """Stop the running phase (py-spy writes its file on SIGINT) and start `phase`."""
        self.stop()
        self._phase, self._since = phase, cpu_seconds(self.pid)
        command = [str(Path(sys.executable).with_name("py-spy")), "record", "--pid", str(self.pid)]
        command += ["--nonblocking", "--rate", str(RATE), "--format", "raw"]
        command += ["--output", str(self.directory / f"{self.name}-{phase}.txt")]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )

    def stop(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(60)
            self.process = None
            self.cpu[self._phase] = cpu_seconds(self.pid) - self._since
            cpu_file = self.directory / f"{self.name}-cpu.json"
            cpu_file.write_text(json.dumps(self.cpu))


def bucket_of(stack: str) -> str:
    for name, markers in BUCKETS:
        if any(marker in stack for marker in markers):
            return name
    return BUCKETS[-1][0]


def read_phase(path: Path) -> Counter:
    """Samples per bucket in one raw collapsed-stack file."""
    counts: Counter = Counter()
    for line in path.read_text().splitlines():
        stack, _, samples = line.rpartition(" ")
        if stack and samples.isdigit():
            counts[bucket_of(stack)] += int(samples)
    return counts


def summary(directory: Path, name: str, turns: int) -> str:
    """A Markdown table: CPU ms per turn of web 1 by bucket and phase."""
    cpu = json.loads((directory / f"{name}-cpu.json").read_text())
    counts = {p: read_phase(directory / f"{name}-{p}.txt") for p in cpu}
    # ms of web 1's CPU per turn that one sample of the phase stands for
    scale = {p: cpu[p] * 1000 / max(turns, 1) / max(sum(counts[p].values()), 1) for p in cpu}
    rows, total = [], Counter()
    for bucket, _ in BUCKETS:
        cells = [counts[p][bucket] * scale[p] for p in counts]
        if sum(cells) >= 0.005:
            rows.append(f"| {bucket} | " + " | ".join(f"{c:.2f}" for c in cells)
                        + f" | {sum(cells):.2f} |")  # fmt: skip
        for p in counts:
            total[p] += counts[p][bucket]
    cells = [total[p] * scale[p] for p in counts]
    head = "| web 1 CPU, ms per turn | " + " | ".join(counts) + " | all |\n"
    head += "|---|" + "---|" * (len(counts) + 1) + "\n"
    foot = "| **all** | " + " | ".join(f"{c:.2f}" for c in cells) + f" | {sum(cells):.2f} |"
    return head + "\n".join(rows) + "\n" + foot


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    names = sorted({p.name.rsplit("-", 1)[0] for p in folder.glob("*-stream.txt")})
    turns = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    for found in names:
        print(f"\n{found}\n\n{summary(folder, found, turns)}")
