"""How many concurrent chat streams can one daphne process carry?

    python bench/chat_load.py [--quick] [--n 100,500,1000]

For each N, a fresh daphne (production settings, throwaway PostgreSQL) gets N WebSockets,
opened at 200 per second, each sending one message. The model server holds every answer
until all N requests have arrived, then streams each a 100-token answer at 50 tokens/s
(one `"tok "` every 20 ms, the streams spread over that interval), so all N streams run at
once for about two seconds. Reported per N:

- completion: turns that ended with `done`, out of N;
- the gap between consecutive `text` frames as each client saw them (ideal: 20 ms), and the
  lag from the model server writing a chunk to the client reading it (a server that falls
  behind delivers frames in bursts: small gaps, large lag);
- resident memory per connection: daphne's VmRSS during the streams minus its VmRSS after a
  warm-up turn, divided by N;
- daphne's CPU while streaming (and time it was runnable but found no free core), its CPU
  time per text frame, and how long after the last `done` the N background saves landed.

The clients and the model server run in this process's event loop, on the same machine as
daphne and PostgreSQL, so their CPU use is reported too. `--profile DIR` also records
daphne with py-spy (`pip install py-spy`) while the streams run, as raw collapsed stacks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    bench_database,
    bench_server,
    machine_note,
    markdown_table,
    pct,
    raise_nofile,
    sql,
)
from websockets.asyncio.client import connect  # noqa: E402

from testing_support.live_server import LiveServer  # noqa: E402
from testing_support.model_server import (  # noqa: E402
    ScriptedOpenAIServer,
    ScriptedResponse,
    text_response,
)
from testing_support.procstat import run_queue_seconds  # noqa: E402

TOKENS = 100
INTERVAL = 0.02  # 50 tokens/s
OPEN_RATE = 200  # sockets per second
IDEAL = (TOKENS - 1) * INTERVAL


@dataclass
class Client:
    texts: list[float] = field(default_factory=list)
    end: str = ""
    error: str = ""
    end_at: float = 0.0


@dataclass
class Result:
    n: int
    done: int = 0
    gaps: list[float] = field(default_factory=list)
    lags: list[float] = field(default_factory=list)  # model chunk written -> client frame
    durations: list[float] = field(default_factory=list)
    idle_rss: int = 0
    connected_rss: int = 0
    plateau_rss: int = 0
    daphne_cpu: float = 0.0
    frames: int = 0  # text frames received, for daphne's CPU per frame
    daphne_waiting: float = 0.0  # runnable, but no CPU free
    bench_cpu: float = 0.0
    window: float = 0.0
    saved: int = 0
    save_seconds: float = 0.0
    failures: dict[str, int] = field(default_factory=dict)


async def one_client(daphne: LiveServer, key: str, client: Client, stop: asyncio.Event) -> None:
    try:
        async with connect(
            daphne.ws_url,
            origin=f"http://127.0.0.1:{daphne.port}",
            compression=None,
            ping_interval=None,
            open_timeout=30,
            close_timeout=2,
        ) as ws:
            await ws.send(json.dumps({"type": "message", "content": key}))
            texts = client.texts
            async for raw in ws:
                now = time.monotonic()
                if raw.startswith('{"type":"text"'):
                    texts.append(now)
                elif raw.startswith(('{"type":"done"', '{"type":"error"')):
                    client.end, client.end_at = json.loads(raw)["type"], now
                    if client.end == "error":
                        client.error = json.loads(raw).get("code", "")
                    break
            await stop.wait()  # keep the socket open until every stream has ended
    except Exception as exc:  # a refused or dropped socket is a result, not a crash
        client.error = client.error or type(exc).__name__


def start_profile(directory: Path, daphne: LiveServer, n: int) -> subprocess.Popen | None:
    """py-spy samples daphne (without pausing it) while the streams run; raw collapsed stacks."""
    directory.mkdir(parents=True, exist_ok=True)
    spy = Path(sys.executable).with_name("py-spy")
    if not spy.exists():
        print("--profile needs py-spy: .venv/bin/pip install py-spy", file=sys.stderr)
        return None
    seconds = int(IDEAL) + 3
    command = [
        str(spy),
        "record",
        "--pid",
        str(daphne.pid),
        "--nonblocking",
        "--rate",
        "200",
        "--duration",
        str(seconds),
        "--format",
        "raw",
        "--output",
        str(directory / f"daphne-{n}.txt"),
    ]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603


def cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def warm_up(daphne: LiveServer) -> None:
    async with connect(
        daphne.ws_url, origin=f"http://127.0.0.1:{daphne.port}", compression=None
    ) as ws:
        await ws.send(json.dumps({"type": "message", "content": "warmup"}))
        async for raw in ws:
            if raw.startswith(('{"type":"done"', '{"type":"error"')):
                assert '"done"' in raw, raw
                break


async def run_n(n: int, url: str, tmp: Path, run_id: str, profile: Path | None) -> Result:
    gate = asyncio.Event()
    prefix = f"load-{run_id}-{n}-"

    def script_for(key: str) -> ScriptedResponse:
        if not key.startswith(prefix):
            return text_response(["tok "] * 5, delay=0.002)
        return text_response(
            ["tok "] * TOKENS,
            usage=(50, 100),
            delay=INTERVAL,
            gate=gate,
            phase=random.uniform(0, INTERVAL),
        )

    server = await ScriptedOpenAIServer(script_for).astart()
    result = Result(n=n)
    stop = asyncio.Event()
    tasks: list[asyncio.Task] = []
    clients = [Client() for _ in range(n)]
    daphne = bench_server(url, server.base_url, tmp, name=f"load-{n}")
    try:
        daphne.start()
        await warm_up(daphne)
        await asyncio.sleep(1.0)
        result.idle_rss = daphne.rss_bytes()
        for i, client in enumerate(clients):
            tasks.append(asyncio.create_task(one_client(daphne, f"{prefix}{i}", client, stop)))
            await asyncio.sleep(1 / OPEN_RATE)
        deadline = time.monotonic() + 60 + n / 20
        while time.monotonic() < deadline:
            if sum(key.startswith(prefix) for key in server.streams) >= n:
                break
            if all(task.done() for task in tasks):
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        result.connected_rss = daphne.rss_bytes()
        cpu_daphne, cpu_bench, waiting = (
            daphne.cpu_seconds(),
            cpu_self(),
            run_queue_seconds(daphne.pid),
        )
        spy = start_profile(profile, daphne, n) if profile else None
        released = time.monotonic()
        gate.set()
        samples = []
        end_by = released + IDEAL + 60
        while time.monotonic() < end_by and not all(c.end or c.error for c in clients):
            if time.monotonic() - released <= IDEAL:
                samples.append(daphne.rss_bytes())
            await asyncio.sleep(0.1)
        finished = time.monotonic()
        result.window = finished - released
        result.daphne_cpu = (daphne.cpu_seconds() - cpu_daphne) / result.window
        result.bench_cpu = (cpu_self() - cpu_bench) / result.window
        result.daphne_waiting = (run_queue_seconds(daphne.pid) - waiting) / result.window
        if spy is not None:
            await asyncio.to_thread(spy.wait, 60)
        result.plateau_rss = max(samples, default=0)
        stop.set()
        await asyncio.wait(tasks, timeout=30)
        for i, client in enumerate(clients):
            stream = server.streams.get(f"{prefix}{i}")
            if stream is not None:
                result.lags += [t - w for t, w in zip(client.texts, stream.writes, strict=False)]
            if client.end == "done":
                result.done += 1
            else:
                reason = client.error or "no ending"
                result.failures[reason] = result.failures.get(reason, 0) + 1
            texts = client.texts
            result.frames += len(texts)
            result.gaps += [b - a for a, b in zip(texts, texts[1:], strict=False)]
            if texts and client.end_at:
                result.durations.append(client.end_at - texts[0])
        pattern = prefix + "%"
        while time.monotonic() - finished < 120:
            query = "SELECT count(*) FROM agent_turn WHERE user_message LIKE %s"
            result.saved = sql(url, query, (pattern,))[0][0]
            if result.saved >= n:
                break
            await asyncio.sleep(0.2)
        result.save_seconds = time.monotonic() - finished  # since the last `done`
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        daphne.stop()
        await server.astop()
    return result


def report(results: list[Result], load: float) -> None:
    print(f"_{machine_note(load)}._\n")
    print(
        f"Each socket: one turn, {TOKENS} text deltas 20 ms apart (ideal stream {IDEAL:.2f} s). "
        "Gap: between consecutive `text` frames at a client. Lag: from the model server writing "
        "a chunk to the client reading its `text` frame.\n"
    )
    head = ["N", "completion", "gap p50 ms", "gap p95 ms", "gap p99 ms", "gap max ms"]
    head += ["lag p50 ms", "lag p95 ms", "stream p95 s", "RSS idle MiB", "RSS connected MiB"]
    head += ["RSS streaming MiB", "KiB / connection"]
    rows = []
    for r in results:
        rows.append([
            str(r.n),
            f"{r.done}/{r.n}",
            *(f"{pct(r.gaps, p) * 1000:.1f}" for p in (50, 95, 99)),
            f"{max(r.gaps, default=float('nan')) * 1000:.0f}",
            *(f"{pct(r.lags, p) * 1000:.1f}" for p in (50, 95)),
            f"{pct(r.durations, 95):.2f}",
            f"{r.idle_rss / 2**20:.0f}",
            f"{r.connected_rss / 2**20:.0f}",
            f"{r.plateau_rss / 2**20:.0f}",
            f"{(r.plateau_rss - r.idle_rss) / r.n / 1024:.0f}",
        ])  # fmt: skip
    print(markdown_table(head, rows))
    head = ["N", "streaming window s", "daphne CPU", "daphne waiting for a CPU"]
    head += [
        "daphne CPU µs / frame",
        "bench CPU",
        "saved rows",
        "all saved, s after last done",
        "failures",
    ]
    rows = []
    for r in results:
        rows.append([
            str(r.n),
            f"{r.window:.2f}",
            f"{r.daphne_cpu:.0%}",
            f"{r.daphne_waiting:.0%}",
            f"{r.daphne_cpu * r.window / max(r.frames, 1) * 1e6:.0f}",
            f"{r.bench_cpu:.0%}",
            f"{r.saved}/{r.n}",
            f"{r.save_seconds:.1f}",
            ", ".join(f"{k}: {v}" for k, v in r.failures.items()) or "none",
        ])  # fmt: skip
    print("\n" + markdown_table(head, rows))
    print(
        "\nCPU and waiting are shares of one core over the streaming window (release of the "
        "answers to the last `done`); daphne is one process with one event loop."
    )
    big = max(results, key=lambda r: r.n)
    gap, lag = pct(big.gaps, 95), pct(big.lags, 95)
    met = big.n >= 1000 and big.done == big.n and max(gap, lag) <= 0.05
    print(
        "\nGoal (1,000 concurrent streams, p95 gap ≤ 50 ms, and p95 lag ≤ 50 ms): "
        f"{'met' if met else 'NOT met'} (N={big.n}: {big.done}/{big.n} done, p95 gap "
        f"{gap * 1000:.0f} ms, p95 lag {lag * 1000:.0f} ms, streams {pct(big.durations, 95):.1f} s "
        f"at p95 for {IDEAL:.1f} s of tokens)."
    )


async def run(sizes: list[int], profile: Path | None) -> None:
    load = os.getloadavg()[0]
    raise_nofile(max(sizes) * 4 + 1024)
    run_id = f"{int(time.time())}"
    results = []
    with bench_database() as url, tempfile.TemporaryDirectory(prefix="docent-bench-") as tmp:
        for n in sizes:
            results.append(await run_n(n, url, Path(tmp), run_id, profile))
            print(f"(N={n} measured)", file=sys.stderr, flush=True)
    report(results, load)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 50 and 100 only")
    parser.add_argument(
        "--n", default="", help="comma-separated socket counts (default 100,500,1000)"
    )
    parser.add_argument(
        "--profile", type=Path, help="write py-spy samples of daphne (raw stacks) here"
    )
    args, _ = parser.parse_known_args()
    sizes = [int(x) for x in args.n.split(",") if x] or (
        [50, 100] if args.quick else [100, 500, 1000]
    )
    asyncio.run(run(sizes, args.profile))
    return 0


if __name__ == "__main__":
    sys.exit(main())
