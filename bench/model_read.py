"""CPU per streamed token of reading the model alone, without daphne, Django or the machine's
other processes in the figure.

    python bench/model_read.py [--n 300] [--rounds 2] [--baseline TREE]

N concurrent answers of 100 tokens at 50 tokens/s (as bench/chat_load.py) are read by
`OpenAICompatModel.stream()` over its aiohttp transport, each through `TextFrames` (50 ms) into
a transport that sends nothing. The scripted model server runs in a process of its own and each
mode in a fresh process, so a mode's figure is that process's CPU (user + system) from the
first token to the last `done` (every request is sent by then: the server holds the answers
until all N came), over the tokens read. Modes, alternating for `--rounds`:
- `paced`: as the chat runs (the socket rests one frame interval after a text block);
- `unpaced`: `read_pause` 0 (only the block-wise parse and one delta per block);
- `baseline`: another checkout's adapter (`--baseline TREE`, with its .venv), e.g. main.
Reads per stream: the text deltas the adapter yielded (one per read that carried text).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKENS = 100
INTERVAL = 0.02  # seconds between tokens: 50 tokens/s


def serve(n: int) -> None:
    """The scripted model server: holds every answer until all N requests came, then streams."""
    sys.path.insert(0, str(ROOT))
    from testing_support.model_server import ScriptedOpenAIServer, text_response

    async def main() -> None:
        gate = asyncio.Event()
        seen = 0

        def script_for(key: str):
            nonlocal seen
            seen += 1
            if seen % n == 0:
                asyncio.get_running_loop().call_soon(gate.set)
            elif seen % n == 1:
                gate.clear()
            return text_response(
                ["tok "] * TOKENS,
                usage=(50, 100),
                delay=INTERVAL,
                gate=gate,
                phase=random.uniform(0, INTERVAL),
            )

        server = await ScriptedOpenAIServer(script_for).astart()
        print(server.base_url, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def read(root: Path, url: str, n: int, pause: float) -> None:
    """One mode: N concurrent streams through the adapter of `root`; prints its figures."""
    sys.path.insert(0, str(root))
    from agent.coalesce import TextFrames
    from agent.llm.base import TextDelta
    from agent.llm.openai_compat import OpenAICompatModel

    kwargs = {}
    if "read_pause" in inspect.signature(OpenAICompatModel).parameters:
        kwargs["read_pause"] = pause

    async def nothing(event: dict) -> None:
        return None

    async def main() -> dict:
        model = OpenAICompatModel(base_url=url, api_key="", model="m", **kwargs)
        reads = 0
        opened: list[tuple[float, float]] = []  # when the first token came, and the CPU then

        async def one(i: int) -> None:
            nonlocal reads
            frames = TextFrames(nothing, interval=0.05)
            async for item in model.stream([{"role": "user", "content": f"q{i}"}], None):
                if isinstance(item, TextDelta):
                    if not opened:
                        opened.append((time.monotonic(), cpu_now()))
                    reads += 1
                    await frames({"type": "text", "content": item.text})
            await frames({"type": "done"})

        before = cpu_now()
        await asyncio.gather(*(one(i) for i in range(n)))
        ended, after = time.monotonic(), cpu_now()
        await model.aclose()
        [(first, at_first)] = opened
        return {
            "cpu": after - at_first,  # the streaming window: all requests sent, tokens flowing
            "cpu_requests": at_first - before,
            "elapsed": ended - first,
            "reads": reads,
        }

    print(json.dumps(asyncio.run(main())), flush=True)


def cpu_now() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(mode: str, root: Path, url: str, n: int) -> dict:
    python = root / ".venv" / "bin" / "python"
    pause = 0.0 if mode == "unpaced" else 0.05
    command = [str(python), __file__, "--read", str(root), url, str(n), str(pause)]
    out = subprocess.run(command, capture_output=True, text=True, check=True, cwd=root)  # noqa: S603
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--read", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return 0
    if args.read:
        root, url, n, pause = args.read
        read(Path(root), url, int(n), float(pause))
        return 0
    modes = {"paced": ROOT, "unpaced": ROOT}
    if args.baseline:
        modes = {"baseline": args.baseline, **modes}
    server = subprocess.Popen(  # noqa: S603
        [sys.executable, __file__, "--serve", str(args.n)], stdout=subprocess.PIPE, text=True
    )
    try:
        url = server.stdout.readline().strip()
        rows: dict[str, list[dict]] = {mode: [] for mode in modes}
        for _ in range(args.rounds):
            for mode, root in modes.items():
                rows[mode].append(measure(mode, root, url, args.n))
    finally:
        server.terminate()
        server.wait()
    load = os.getloadavg()[0]
    print(
        f"\n_N = {args.n} streams of {TOKENS} tokens at 50 tokens/s, {args.rounds} rounds; "
        f"load average {load:.1f} at the end._\n"
    )
    print(
        "| mode | µs / token, each round | µs / token, mean | reads / stream | window s "
        "| ms / request before the first token |"
    )
    print("|---|---|---|---|---|---|")
    base = None
    for mode, results in rows.items():
        per_token = [r["cpu"] / (args.n * TOKENS) * 1e6 for r in results]
        mean = sum(per_token) / len(per_token)
        base = base if base is not None else mean
        reads = sum(r["reads"] for r in results) / len(results) / args.n
        window = sum(r["elapsed"] for r in results) / len(results)
        rounds = ", ".join(f"{x:.1f}" for x in per_token)
        setup = sum(r["cpu_requests"] for r in results) / len(results) / args.n * 1e3
        ratio = f" ({mean / base:.2f}×)" if mode != next(iter(rows)) else ""
        print(
            f"| {mode} | {rounds} | {mean:.1f}{ratio} | {reads:.1f} | {window:.2f} | {setup:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
