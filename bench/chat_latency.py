"""What the chat transport adds to a turn's latency, against a real daphne on loopback.

    python bench/chat_latency.py [--quick] [--cluster N]

With `--cluster 2` it runs `make run WORKERS=2` (bench/_cluster.py) and measures everything
twice, straight to its first web process (`direct`) and through its nginx (`proxy`), so the
difference is what the proxy adds.

- First token: from the model server writing its first content chunk to the client reading
  the first `text` frame (WebSocket and SSE). Both clocks are `time.monotonic()` of this
  process: the model server runs in a thread here, the client in the main loop.
- Final event: from the last `text` frame to `done` while every save really takes 500 ms
  (a PostgreSQL trigger on writing a finished agent_turn row runs pg_sleep(0.5)); then every
  finished turn's row is counted.
- Cancel: from the client's `stop` (or its closing the socket) to the model server seeing
  its stream closed.

Sequential turns on one socket, each a new conversation. daphne runs in production mode
(DEBUG off) with a throwaway embedded PostgreSQL; everything is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx  # noqa: E402
from _cluster import ClusterTier  # noqa: E402
from _common import (  # noqa: E402
    SUMMARY_HEAD,
    bench_database,
    bench_server,
    machine_note,
    pct,
    sql,
    summary_row,
)
from websockets.asyncio.client import ClientConnection, connect  # noqa: E402

from testing_support.model_server import (  # noqa: E402
    ScriptedOpenAIServer,
    ScriptedResponse,
    text_response,
)

SLOW_SAVE = """
CREATE OR REPLACE FUNCTION bench_slow_save() RETURNS trigger AS $$
BEGIN PERFORM pg_sleep(0.5); RETURN NEW; END $$ LANGUAGE plpgsql;
CREATE TRIGGER bench_slow_save BEFORE INSERT OR UPDATE ON agent_turn
FOR EACH ROW WHEN (NEW.status <> 'running') EXECUTE FUNCTION bench_slow_save();
"""
FAST_SAVE = "DROP TRIGGER IF EXISTS bench_slow_save ON agent_turn"
TURN_TIMEOUT = 30.0
LOAD_AT_START = os.getloadavg()[0]


def script_for(key: str) -> ScriptedResponse:
    kind = key.split("-", 1)[0]
    if kind == "cancel":  # a long answer that never finishes: only a stop ends it
        return text_response(["tok "] * 2000, delay=0.02, hold=True)
    if kind == "final":
        return text_response(["tok "] * 20, delay=0.005, first_delay=0.01)
    # first token: the model "thinks" 30 ms, so the server is idle when the chunk arrives
    return text_response(["tok "] * 5, delay=0.002, first_delay=0.03)


@dataclass
class Target:
    """Where the clients connect: one daphne directly, or nginx in front of the cluster."""

    name: str
    ws_url: str
    origin: str
    url: str


async def ws_connect(daphne: Target) -> ClientConnection:
    return await connect(
        daphne.ws_url,
        origin=daphne.origin,
        compression=None,
        ping_interval=None,
        open_timeout=10,
    )


async def ws_turn(ws: ClientConnection, key: str, stop_after: int | None = None) -> dict:
    """Send one message; return the arrival times of its frames (and the stop's send time)."""
    times: dict = {"sent": time.monotonic(), "texts": 0}
    await ws.send(json.dumps({"type": "message", "content": key}))
    while True:
        raw = await asyncio.wait_for(ws.recv(), TURN_TIMEOUT)
        now = time.monotonic()
        event = json.loads(raw)
        kind = event["type"]
        if kind == "start":
            times["start"] = now
        elif kind == "text":
            times.setdefault("first_text", now)
            times["last_text"] = now
            times["texts"] += 1
            if stop_after is not None and times["texts"] == stop_after:
                times["stop"] = time.monotonic()
                await ws.send('{"type":"stop"}')
        elif kind in ("done", "error"):
            times["end"], times["end_type"], times["code"] = now, kind, event.get("code", "")
            return times


async def first_token_ws(
    targets: list[Target], server: ScriptedOpenAIServer, turns: int
) -> dict[str, tuple[list, list]]:
    """Turns alternate between the targets, so the machine's noise falls on each alike."""
    out: dict[str, tuple[list, list]] = {t.name: ([], []) for t in targets}
    async with contextlib.AsyncExitStack() as stack:
        sockets = [await stack.enter_async_context(await ws_connect(t)) for t in targets]
        for target, ws in zip(targets, sockets, strict=True):
            await ws_turn(ws, f"ft-warmup-{target.name}-0")
        for i in range(turns):
            for target, ws in zip(targets, sockets, strict=True):
                key = f"ft-ws-{target.name}-{i}"
                times = await ws_turn(ws, key)
                assert times["end_type"] == "done", times
                delays, starts = out[target.name]
                delays.append(times["first_text"] - server.streams[key].first_content_at)
                starts.append(times["start"] - times["sent"])
    return out


async def first_token_sse(
    targets: list[Target], server: ScriptedOpenAIServer, turns: int
) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {t.name: [] for t in targets}
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                httpx.AsyncClient(base_url=t.url, timeout=TURN_TIMEOUT, headers={"Origin": t.url})
            )
            for t in targets
        ]
        for i in range(-1, turns):  # -1 is the warm-up
            for target, client in zip(targets, clients, strict=True):
                key = f"ft-sse-{target.name}-{i}"
                first = await _sse_first_text(client, key)
                if i >= 0:
                    out[target.name].append(first - server.streams[key].first_content_at)
    return out


async def _sse_first_text(client: httpx.AsyncClient, key: str) -> float:
    first = ending = None
    async with client.stream("POST", "/api/chat", json={"content": key}) as response:
        assert response.status_code == 200, response.status_code
        async for line in response.aiter_lines():
            if first is None and line.startswith('data: {"type":"text"'):
                first = time.monotonic()
            elif line.startswith(('data: {"type":"done"', 'data: {"type":"error"')):
                ending = line
    assert first is not None and ending and '"done"' in ending, ending
    return first


async def final_event(daphne: Target, turns: int) -> tuple[list, list]:
    delays, starts = [], []
    async with await ws_connect(daphne) as ws:
        for i in range(turns):
            times = await ws_turn(ws, f"final-{daphne.name}-{i}")
            assert times["end_type"] == "done", times
            delays.append(times["end"] - times["last_text"])
            starts.append(times["start"] - times["sent"])
    return delays, starts


async def closed_at(server: ScriptedOpenAIServer, key: str, timeout: float = 2.0) -> float | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stream = server.streams.get(key)
        if stream is not None and stream.client_closed_at is not None:
            return stream.client_closed_at
        await asyncio.sleep(0.005)
    return None


async def cancel(
    daphne: Target, server: ScriptedOpenAIServer, turns: int
) -> tuple[list, list, int]:
    stops, disconnects, missed = [], [], 0
    async with await ws_connect(daphne) as ws:
        for i in range(turns):
            key = f"cancel-stop-{daphne.name}-{i}"
            times = await ws_turn(ws, key, stop_after=3)
            assert times["code"] == "cancelled", times
            closed = await closed_at(server, key)
            missed += closed is None
            if closed is not None:
                stops.append(closed - times["stop"])
    for i in range(turns):
        key = f"cancel-close-{daphne.name}-{i}"
        ws = await ws_connect(daphne)
        await ws.send(json.dumps({"type": "message", "content": key}))
        texts = 0
        while texts < 3:
            texts += json.loads(await asyncio.wait_for(ws.recv(), TURN_TIMEOUT))["type"] == "text"
        left = time.monotonic()
        await ws.close()
        closed = await closed_at(server, key)
        missed += closed is None
        if closed is not None:
            disconnects.append(closed - left)
    return stops, disconnects, missed


async def wait_rows(url: str, where: str, expected: int, timeout: float) -> tuple[int, float]:
    """Poll until `expected` agent_turn rows match `where`; return the count and the wait."""
    started = time.monotonic()
    count = 0
    while time.monotonic() - started < timeout:
        # A turn's row exists from its start (durable start): count the finished ones.
        query = f"SELECT count(*) FROM agent_turn WHERE status <> 'running' AND {where}"  # noqa: S608
        count = sql(url, query)[0][0]
        if count >= expected:
            break
        await asyncio.sleep(0.1)
    return count, time.monotonic() - started


@dataclass
class Measured:
    first_ws: list[float] = field(default_factory=list)
    first_sse: list[float] = field(default_factory=list)
    final: list[float] = field(default_factory=list)
    stops: list[float] = field(default_factory=list)
    disconnects: list[float] = field(default_factory=list)
    missed: int = 0
    start_fast: list[float] = field(default_factory=list)
    start_slow: list[float] = field(default_factory=list)
    final_saved: int = 0
    final_wait: float = 0.0
    turns: int = 0  # every turn sent, warm-ups included
    saved: dict[str, int] = field(default_factory=dict)  # rows by status
    spooled: int = 0


async def measure(targets: list[Target], server, url: str, quick: bool) -> dict[str, Measured]:
    n_first, n_final, n_cancel = (50, 30, 20) if quick else (200, 100, 50)
    turns = 1 + n_first + (n_first // 2 + 1) + 2 * n_cancel + n_final
    results = {t.name: Measured(turns=turns) for t in targets}
    for name, (delays, starts) in (await first_token_ws(targets, server, n_first)).items():
        results[name].first_ws, results[name].start_fast = delays, starts
    for name, delays in (await first_token_sse(targets, server, n_first // 2)).items():
        results[name].first_sse = delays
    for target in targets:
        m = results[target.name]
        m.stops, m.disconnects, m.missed = await cancel(target, server, n_cancel)
    sql(url, SLOW_SAVE)
    try:
        for target in targets:
            m = results[target.name]
            m.final, m.start_slow = await final_event(target, n_final)
            m.final_saved, m.final_wait = await wait_rows(
                url, f"user_message LIKE 'final-{target.name}-%'", n_final, n_final * 0.5 + 30
            )
    finally:
        sql(url, FAST_SAVE)
    for target in targets:
        mine = f"user_message LIKE '%-{target.name}-%'"
        await wait_rows(url, mine, turns, timeout=30)
        query = f"SELECT status, count(*) FROM agent_turn WHERE {mine} GROUP BY status"  # noqa: S608
        results[target.name].saved = dict(sql(url, query))
    return results


async def run(quick: bool, cluster: int) -> dict[str, Measured]:
    """One daphne, directly; or with `cluster`, `make run WORKERS=N` measured twice: straight
    to its first web process and through nginx, so the difference is the proxy's alone."""
    results: dict[str, Measured] = {}
    server = ScriptedOpenAIServer(script_for).start()
    try:
        with bench_database() as url, tempfile.TemporaryDirectory(prefix="docent-bench-") as tmp:
            if not cluster:
                with bench_server(url, server.base_url, Path(tmp)) as daphne:
                    target = Target("direct", daphne.ws_url, daphne.url, daphne.url)
                    results = await measure([target], server, url, quick)
                results["direct"].spooled = len(list(Path(tmp).glob("*.jsonl")))
                return results
            tier = ClusterTier(
                workers=cluster, database_url=url, model_url=server.base_url, tmp=Path(tmp),
                env={},
            )  # fmt: skip
            with tier:
                await asyncio.to_thread(tier.settle)
                web = f"127.0.0.1:{tier.web_ports[0]}"
                direct = Target("direct", f"ws://{web}/ws/chat/", f"http://{web}", f"http://{web}")
                ws_url, origin = tier.ws_url()
                proxy = Target("proxy", ws_url, origin, origin)
                results = await measure([direct, proxy], server, url, quick)
            spooled = len(list(Path(tmp).glob("spool-*/*.jsonl")))
            results["direct"].spooled = results["proxy"].spooled = spooled
    finally:
        server.stop()
    return results


def report(results: dict[str, Measured]) -> None:
    print(f"_{machine_note(LOAD_AT_START)}._\n")
    if "proxy" in results:
        print(
            "`make run WORKERS=N` on loopback: `direct` to its first web process, `proxy` "
            "through its nginx.\n"
        )
    print("### First token: model's first content chunk written → client's first `text` frame\n")
    print(SUMMARY_HEAD)
    for name, m in results.items():
        print(summary_row(f"WebSocket, {name}", m.first_ws, "p95 ≤ 5 ms"))
        print(summary_row(f"SSE (`POST /api/chat`), {name}", m.first_sse, "p95 ≤ 5 ms"))
    added = _added(results)
    if added:
        print(f"\nAdded by the proxy at p95: {added}.")
    print(
        "\n### Final event: last `text` → `done`, every save slowed to 500 ms (pg_sleep trigger)\n"
    )
    print(SUMMARY_HEAD)
    for name, m in results.items():
        print(summary_row(f"WebSocket, {name}", m.final, "p95 ≤ 2 ms"))
    for name, m in results.items():
        print(
            f"\n{name}: slow saves landed {m.final_saved}/{len(m.final)}, "
            f"{m.final_wait:.1f} s after the last `done`."
        )
    print("\n### Cancel: client's action → model server sees its stream closed\n")
    print(SUMMARY_HEAD)
    for name, m in results.items():
        print(summary_row(f'`{{"type":"stop"}}`, {name}', m.stops, "≤ 100 ms"))
        print(summary_row(f"socket closed, {name}", m.disconnects, "≤ 100 ms"))
        if m.missed:
            print(f"\n{name}: {m.missed} cancelled streams were not seen closed within 2 s.")
    print("\n### For context: message sent → `start` frame (turn set-up, including DB reads)\n")
    print(SUMMARY_HEAD)
    for name, m in results.items():
        print(summary_row(f"saves fast, {name}", m.start_fast, ""))
        print(summary_row(f"saves 500 ms, {name}", m.start_slow, ""))
    verdict = {True: "met", False: "NOT met"}
    for name, m in results.items():
        total = sum(m.saved.values())
        statuses = ", ".join(f"{status} {count}" for status, count in sorted(m.saved.items()))
        print(f"\n{name}: every turn saved: {total}/{m.turns} rows ({statuses}); spool files: "
              f"{m.spooled}.")  # fmt: skip
        ok_first = max(pct(m.first_ws, 95), pct(m.first_sse, 95)) <= 0.005
        ok_final = pct(m.final, 95) <= 0.002 and m.final_saved == len(m.final)
        ok_cancel = max(m.stops + m.disconnects, default=1) <= 0.1 and not m.missed
        print(
            f"Goals, {name}: first token {verdict[ok_first]}, final event "
            f"{verdict[ok_final and total == m.turns]}, cancel {verdict[ok_cancel]}."
        )


def _added(results: dict[str, Measured]) -> str:
    if "proxy" not in results:
        return ""
    direct, proxy = results["direct"], results["proxy"]
    ws = pct(proxy.first_ws, 95) - pct(direct.first_ws, 95)
    sse = pct(proxy.first_sse, 95) - pct(direct.first_sse, 95)
    met = "met" if max(ws, sse) <= 0.005 else "NOT met"
    return f"WebSocket {ws * 1000:+.2f} ms, SSE {sse * 1000:+.2f} ms (goal ≤ 5 ms: {met})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer turns")
    parser.add_argument(
        "--cluster", type=int, default=0, metavar="N",
        help="also measure through nginx in front of `make run WORKERS=N`",
    )  # fmt: skip
    args, _ = parser.parse_known_args()
    report(asyncio.run(run(args.quick, args.cluster)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
