"""How many concurrent chat streams do the web processes carry, and at what CPU per token?

    python bench/chat_load.py [--quick] [--n 100,500,1000] [--workers N] [--proxy | --cluster]
                              [--modes coalesced,per-delta,bare]

`--cluster --workers 2` runs the chat modes through `make run WORKERS=2` (bench/_cluster.py):
nginx, two daphne, redis and the task worker under supervisord, each process's CPU apart.

For each mode and N, fresh web processes (production settings, one throwaway PostgreSQL)
get N WebSockets, opened at 200 per second, each sending one message. The model server holds
every answer until all N requests have arrived, then streams each a 100-token answer at 50
tokens/s (one `"tok "` every 20 ms, the streams spread over that interval), so all N streams
run at once for about two seconds.

Modes, measured in the same run so their ratio holds whatever else the machine does:
- `coalesced`: the chat as shipped, text deltas joined into a frame per 50 ms;
- `baseline`: `coalesced` from another checkout (`--baseline TREE`, e.g. main), same run;
- `per-delta`: the same code with AGENT_TEXT_FRAME_MS=0, a frame per delta (the old path);
- `bare`: a bare ASGI app under daphne that forwards the model's deltas as the same frames,
  without Django or the agent (bench/_bare_asgi.py): daphne's own floor;
- `uvicorn`, `granian`: the coalesced chat under another ASGI server, for comparison.

Reported: turns done and saved; refused upgrades by HTTP status, and how long upgrades took
(connect to `101`: a web process resets one its application has not accepted in time); stream
duration (first `text` to `done`; ideal 1.98 s); lag from the model server writing a token to
the client reading the frame that holds it; frames per stream; resident memory per connection
(web VmRSS while streaming minus after warm-up, over N); CPU of every process over the streaming
window (release of the answers to the last `done`): each web worker, nginx, PostgreSQL (with its
backends), and this process (clients and model server, one asyncio loop); web CPU per upstream
token and streams per web core.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _cluster import ClusterTier  # noqa: E402
from _common import ROOT, bench_database, pct, raise_nofile, sql  # noqa: E402
from _load_report import report  # noqa: E402
from _load_web import CpuMeter, WebTier  # noqa: E402
from _profile import Spy, summary  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import InvalidStatus  # noqa: E402

from testing_support.model_server import (  # noqa: E402
    ScriptedOpenAIServer,
    ScriptedResponse,
    text_response,
)

TOKENS = 100
INTERVAL = 0.02  # 50 tokens/s
OPEN_RATE = 200  # sockets per second
IDEAL = (TOKENS - 1) * INTERVAL
MODES = {  # mode -> (web process kind, environment)
    "coalesced": ("daphne", {"AGENT_TEXT_FRAME_MS": "50"}),
    "per-delta": ("daphne", {"AGENT_TEXT_FRAME_MS": "0", "AGENT_MODEL_HTTP": "httpx"}),
    "coalesced-httpx": ("daphne", {"AGENT_TEXT_FRAME_MS": "50", "AGENT_MODEL_HTTP": "httpx"}),
    "bare": ("bare", {}),
    "uvicorn": ("uvicorn", {"AGENT_TEXT_FRAME_MS": "50"}),
    "granian": ("granian", {"AGENT_TEXT_FRAME_MS": "50"}),
    "baseline": ("daphne", {"AGENT_TEXT_FRAME_MS": "50"}),  # coalesced, from --baseline TREE
}


@dataclass
class Client:
    frames: list[tuple[float, int]] = field(default_factory=list)  # (read at, tokens in it)
    end: str = ""
    error: str = ""
    end_at: float = 0.0
    upgrade: float = 0.0  # connect called -> the 101 read (0: never upgraded)


@dataclass
class Result:
    mode: str
    n: int
    workers: int
    done: int = 0
    saved: int | None = None
    lags: list[float] = field(default_factory=list)  # token written -> its frame read
    durations: list[float] = field(default_factory=list)
    frames: int = 0
    idle_rss: int = 0
    plateau_rss: int = 0
    window: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)  # process group -> CPU seconds
    waiting: dict[str, float] = field(default_factory=dict)  # group -> runnable, no core
    failures: dict[str, int] = field(default_factory=dict)
    whole_cpu: float = 0.0  # web CPU seconds from the first socket opened to the last save
    upgrades: list[float] = field(default_factory=list)  # seconds each upgrade took
    load: float = 0.0  # the machine's 1-minute load average when the round started

    @property
    def web_cpu(self) -> float:
        return sum(v for k, v in self.cpu.items() if k.startswith("web"))


async def one_client(url: str, origin: str, key: str, client: Client, stop: asyncio.Event):
    started = time.monotonic()
    try:
        async with connect(
            url, origin=origin, compression=None, ping_interval=None, open_timeout=60,
            close_timeout=2, max_queue=None,
        ) as ws:  # fmt: skip
            client.upgrade = time.monotonic() - started
            await ws.send(orjson.dumps({"type": "message", "content": key}).decode())
            frames = client.frames
            async for raw in ws:
                now = time.monotonic()
                if raw.startswith('{"type":"text"'):
                    frames.append((now, raw.count("tok ")))
                elif raw.startswith(('{"type":"done"', '{"type":"error"')):
                    event = orjson.loads(raw)
                    client.end, client.end_at = event["type"], now
                    client.error = event.get("code", "")
                    break
            await stop.wait()  # keep the socket open until every stream has ended
    except InvalidStatus as exc:  # the upgrade was refused: by whom shows in the status
        client.error = f"http {exc.response.status_code}"
    except Exception as exc:  # a refused or dropped socket is a result, not a crash
        client.error = client.error or type(exc).__name__


async def warm_up(web: WebTier, turns: int) -> None:
    for i in range(turns):
        url, origin = web.ws_url()
        async with connect(url, origin=origin, compression=None) as ws:
            await ws.send(orjson.dumps({"type": "message", "content": f"warmup-{i}"}).decode())
            async for raw in ws:
                if raw.startswith(('{"type":"done"', '{"type":"error"')):
                    assert '"done"' in raw, raw
                    break


async def run_one(mode: str, n: int, args: argparse.Namespace, url: str, tmp: Path) -> Result:
    gate = asyncio.Event()
    prefix = f"load-{mode}-{n}-{time.time_ns()}-"

    def script_for(key: str) -> ScriptedResponse:
        if not key.startswith(prefix):
            return text_response(["tok "] * 5, delay=0.002)
        phase = random.uniform(0, INTERVAL)
        return text_response(
            ["tok "] * TOKENS, usage=(50, 100), delay=INTERVAL, gate=gate, phase=phase
        )

    kind, env = MODES[mode]
    server = await ScriptedOpenAIServer(script_for).astart()
    result = Result(mode=mode, n=n, workers=args.workers, load=os.getloadavg()[0])
    stop = asyncio.Event()
    clients = [Client() for _ in range(n)]
    tasks: list[asyncio.Task] = []
    if args.cluster and kind == "daphne":
        root = args.baseline if mode == "baseline" else ROOT
        web = ClusterTier(
            workers=args.workers, database_url=url, model_url=server.base_url, tmp=tmp, env=env,
            root=root,
        )  # fmt: skip
    else:
        web = WebTier(
            kind=kind, workers=args.workers, database_url=url, model_url=server.base_url,
            tmp=tmp, env=env, proxy=args.proxy,
        )  # fmt: skip
    try:
        with web:
            if isinstance(web, ClusterTier):
                await asyncio.to_thread(web.settle)  # first-run indexing in the task worker
            await warm_up(web, 4 * args.workers)
            await asyncio.sleep(1.0)
            result.idle_rss = web.rss_bytes()
            spy = Spy(args.profile, web.servers[0].pid, f"{mode}-{n}") if args.profile else None
            if spy is not None:
                spy.phase("open")
            whole = CpuMeter(web.groups(url))  # the turns' whole life: open, stream, save
            whole.start()
            for i, client in enumerate(clients):
                ws_url, origin = web.ws_url()
                coro = one_client(ws_url, origin, f"{prefix}{i}", client, stop)
                tasks.append(asyncio.create_task(coro))
                await asyncio.sleep(1 / OPEN_RATE)
            await _all_requested(server, prefix, clients, tasks)
            meter = CpuMeter(web.groups(url))
            meter.start()
            if spy is not None:
                spy.phase("stream")
            released = time.monotonic()
            gate.set()
            samples = []
            while time.monotonic() < released + IDEAL + 60:
                if all(c.end or c.error for c in clients):
                    break
                if time.monotonic() - released <= IDEAL:
                    samples.append(web.rss_bytes())
                await asyncio.sleep(0.1)
            result.window = time.monotonic() - released
            result.cpu = meter.stop()
            result.waiting = meter.waiting
            result.plateau_rss = max(samples, default=0)
            if spy is not None:
                spy.phase("save")
            stop.set()
            await asyncio.wait(tasks, timeout=30)
            _collect(result, clients, server, prefix)
            if kind != "bare":
                result.saved = await _saved(url, prefix, n)
            result.whole_cpu = sum(v for k, v in whole.stop().items() if k.startswith("web"))
            if spy is not None:
                await asyncio.sleep(0.5)  # the last saves' bookkeeping
                spy.stop()
                _print_profile(args.profile, f"{mode}-{n}", url, prefix, web.servers[0].pid)
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.astop()
    return result


def _print_profile(directory: Path, name: str, url: str, prefix: str, pid: int) -> None:
    """Web 1's CPU per turn by phase and bucket (bench/_profile.py), over its own turns."""
    query = "SELECT count(*) FROM agent_turn WHERE user_message LIKE %s AND worker LIKE %s"
    turns = sql(url, query, (prefix + "%", f"%:{pid}:%"))[0][0]
    print(f"\nweb 1 profile ({name}, {turns} turns on web 1):\n", file=sys.stderr)
    print(summary(directory, name, turns), file=sys.stderr, flush=True)


async def _all_requested(server: ScriptedOpenAIServer, prefix: str, clients, tasks) -> None:
    """Until every socket that opened has its answer waiting (a refused one never will)."""
    deadline = time.monotonic() + 60 + len(clients) / 20
    while time.monotonic() < deadline:
        refused = sum(bool(c.error) for c in clients)
        if sum(key.startswith(prefix) for key in server.streams) + refused >= len(clients):
            break
        if all(task.done() for task in tasks):
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)


def _collect(result: Result, clients: list[Client], server, prefix: str) -> None:
    for i, client in enumerate(clients):
        stream = server.streams.get(f"{prefix}{i}")
        writes = stream.writes if stream is not None else []
        token = 0
        for read_at, count in client.frames:
            result.lags += [read_at - w for w in writes[token : token + count]]
            token += count
        result.frames += len(client.frames)
        if client.upgrade:
            result.upgrades.append(client.upgrade)
        if client.end == "done":
            result.done += 1
        else:
            reason = client.error or "no ending"
            result.failures[reason] = result.failures.get(reason, 0) + 1
        if client.frames and client.end_at:
            result.durations.append(client.end_at - client.frames[0][0])


async def _saved(url: str, prefix: str, n: int) -> int:
    saved, started = 0, time.monotonic()
    while time.monotonic() - started < 120:
        # A turn's row exists from its start (durable start): count the finished ones.
        query = "SELECT count(*) FROM agent_turn WHERE status <> 'running' AND user_message LIKE %s"
        saved = sql(url, query, (prefix + "%",))[0][0]
        if saved >= n:
            break
        await asyncio.sleep(0.2)
    return saved


async def run(args: argparse.Namespace) -> None:
    load = os.getloadavg()[0]
    raise_nofile(max(args.sizes) * 4 + 4096)
    results = []
    with bench_database() as url, tempfile.TemporaryDirectory(prefix="docent-bench-") as tmp:
        for n in args.sizes:
            for mode in args.modes:
                results.append(await run_one(mode, n, args, url, Path(tmp)))
                r = results[-1]
                print(
                    f"({mode} N={n}: {r.done}/{n} done, p95 {pct(r.durations, 95):.2f} s)",
                    file=sys.stderr,
                    flush=True,
                )
    report(results, load, tokens=TOKENS, ideal=IDEAL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 50 and 100 only")
    parser.add_argument("--n", default="", help="comma-separated socket counts")
    parser.add_argument("--workers", type=int, default=1, help="web processes (default 1)")
    parser.add_argument("--proxy", action="store_true", help="nginx in front of the workers")
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="daphne modes through `make run WORKERS=N` (supervisord, nginx, redis, worker)",
    )
    parser.add_argument(
        "--profile", type=Path, help="py-spy stacks of web 1 by phase (bench/_profile.py)"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout (with its .venv) whose cluster runs as mode `baseline`, e.g. main",
    )
    parser.add_argument("--modes", default="coalesced,per-delta,bare", help=", ".join(MODES))
    args, _ = parser.parse_known_args()
    args.sizes = [int(x) for x in args.n.split(",") if x] or (
        [50, 100] if args.quick else [100, 500, 1000]
    )
    args.modes = [m for m in args.modes.split(",") if m]
    if "baseline" in args.modes and not (args.cluster and args.baseline):
        parser.error("mode baseline needs --cluster and --baseline TREE")
    unknown = set(args.modes) - set(MODES)
    if unknown:
        parser.error(f"unknown modes {sorted(unknown)}; choose from {', '.join(MODES)}")
    try:
        import uvloop  # the clients and the model server: less of the machine for the bench
    except ImportError:
        asyncio.run(run(args))
    else:
        uvloop.run(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
