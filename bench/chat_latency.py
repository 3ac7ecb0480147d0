"""What the chat transport adds to a turn's latency, against a real daphne on loopback.

    python bench/chat_latency.py [--quick]

- First token: from the model server writing its first content chunk to the client reading
  the first `text` frame (WebSocket and SSE). Both clocks are `time.monotonic()` of this
  process: the model server runs in a thread here, the client in the main loop.
- Final event: from the last `text` frame to `done` while every save really takes 500 ms
  (a PostgreSQL trigger on INSERT into agent_turn runs pg_sleep(0.5)); then every turn's
  row is counted.
- Cancel: from the client's `stop` (or its closing the socket) to the model server seeing
  its stream closed.

Sequential turns on one socket, each a new conversation. LiveServer runs in production mode
(DEBUG off) with a throwaway embedded PostgreSQL; everything is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx  # noqa: E402
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

from testing_support.live_server import LiveServer  # noqa: E402
from testing_support.model_server import (  # noqa: E402
    ScriptedOpenAIServer,
    ScriptedResponse,
    text_response,
)

SLOW_SAVE = """
CREATE OR REPLACE FUNCTION bench_slow_save() RETURNS trigger AS $$
BEGIN PERFORM pg_sleep(0.5); RETURN NEW; END $$ LANGUAGE plpgsql;
CREATE TRIGGER bench_slow_save BEFORE INSERT ON agent_turn
FOR EACH ROW EXECUTE FUNCTION bench_slow_save();
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


async def ws_connect(daphne: LiveServer) -> ClientConnection:
    return await connect(
        daphne.ws_url,
        origin=f"http://127.0.0.1:{daphne.port}",
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
    daphne: LiveServer, server: ScriptedOpenAIServer, turns: int
) -> tuple[list, list]:
    delays, starts = [], []
    async with await ws_connect(daphne) as ws:
        await ws_turn(ws, "ft-warmup")
        for i in range(turns):
            key = f"ft-ws-{i}"
            times = await ws_turn(ws, key)
            assert times["end_type"] == "done", times
            delays.append(times["first_text"] - server.streams[key].first_content_at)
            starts.append(times["start"] - times["sent"])
    return delays, starts


async def first_token_sse(
    daphne: LiveServer, server: ScriptedOpenAIServer, turns: int
) -> list[float]:
    delays = []
    async with httpx.AsyncClient(
        base_url=daphne.url, timeout=TURN_TIMEOUT, headers={"Origin": daphne.url}
    ) as client:
        for i in range(-1, turns):
            key = f"ft-sse-{i}"
            first = ending = None
            async with client.stream("POST", "/api/chat", json={"content": key}) as response:
                assert response.status_code == 200, response.status_code
                async for line in response.aiter_lines():
                    if first is None and line.startswith('data: {"type":"text"'):
                        first = time.monotonic()
                    elif line.startswith(('data: {"type":"done"', 'data: {"type":"error"')):
                        ending = line
            assert ending and '"done"' in ending, ending
            if i >= 0:  # -1 is the warm-up
                delays.append(first - server.streams[key].first_content_at)
    return delays


async def final_event(daphne: LiveServer, turns: int) -> tuple[list, list]:
    delays, starts = [], []
    async with await ws_connect(daphne) as ws:
        for i in range(turns):
            times = await ws_turn(ws, f"final-{i}")
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
    daphne: LiveServer, server: ScriptedOpenAIServer, turns: int
) -> tuple[list, list, int]:
    stops, disconnects, missed = [], [], 0
    async with await ws_connect(daphne) as ws:
        for i in range(turns):
            key = f"cancel-stop-{i}"
            times = await ws_turn(ws, key, stop_after=3)
            assert times["code"] == "cancelled", times
            closed = await closed_at(server, key)
            missed += closed is None
            if closed is not None:
                stops.append(closed - times["stop"])
    for i in range(turns):
        key = f"cancel-close-{i}"
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
        count = sql(url, f"SELECT count(*) FROM agent_turn WHERE {where}")[0][0]  # noqa: S608
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


async def run(quick: bool) -> Measured:
    n_first, n_final, n_cancel = (50, 30, 20) if quick else (200, 100, 50)
    m = Measured(turns=1 + n_first + (n_first // 2 + 1) + 2 * n_cancel + n_final)
    server = ScriptedOpenAIServer(script_for).start()
    try:
        with bench_database() as url, tempfile.TemporaryDirectory(prefix="docent-bench-") as tmp:
            with bench_server(url, server.base_url, Path(tmp)) as daphne:
                m.first_ws, m.start_fast = await first_token_ws(daphne, server, n_first)
                m.first_sse = await first_token_sse(daphne, server, n_first // 2)
                m.stops, m.disconnects, m.missed = await cancel(daphne, server, n_cancel)
                sql(url, SLOW_SAVE)
                try:
                    m.final, m.start_slow = await final_event(daphne, n_final)
                    m.final_saved, m.final_wait = await wait_rows(
                        url, "user_message LIKE 'final-%'", n_final, timeout=n_final * 0.5 + 30
                    )
                finally:
                    sql(url, FAST_SAVE)
                await wait_rows(url, "true", m.turns, timeout=30)
                rows = sql(url, "SELECT status, count(*) FROM agent_turn GROUP BY status")
                m.saved = dict(rows)
                m.spooled = len(list(Path(tmp).glob("*.jsonl")))
    finally:
        server.stop()
    return m


def report(m: Measured) -> None:
    print(f"_{machine_note(LOAD_AT_START)}._\n")
    print("### First token: model's first content chunk written → client's first `text` frame\n")
    print(SUMMARY_HEAD)
    print(summary_row("WebSocket", m.first_ws, "p95 ≤ 5 ms"))
    print(summary_row("SSE (`POST /api/chat`)", m.first_sse, "p95 ≤ 5 ms"))
    print(
        "\n### Final event: last `text` → `done`, every save slowed to 500 ms (pg_sleep trigger)\n"
    )
    print(SUMMARY_HEAD)
    print(summary_row("WebSocket", m.final, "p95 ≤ 2 ms"))
    n_final = len(m.final)
    print(
        f"\nSlow saves landed: {m.final_saved}/{n_final}, "
        f"{m.final_wait:.1f} s after the last `done`."
    )
    print("\n### Cancel: client's action → model server sees its stream closed\n")
    print(SUMMARY_HEAD)
    print(summary_row('`{"type":"stop"}`', m.stops, "≤ 100 ms"))
    print(summary_row("socket closed", m.disconnects, "≤ 100 ms"))
    if m.missed:
        print(f"\n{m.missed} cancelled streams were not seen closed within 2 s.")
    print("\n### For context: message sent → `start` frame (turn set-up, including DB reads)\n")
    print(SUMMARY_HEAD)
    print(summary_row("saves fast", m.start_fast, ""))
    print(summary_row("saves 500 ms", m.start_slow, ""))
    total = sum(m.saved.values())
    statuses = ", ".join(f"{status} {count}" for status, count in sorted(m.saved.items()))
    print(f"\nEvery turn saved: {total}/{m.turns} rows ({statuses}); spool files: {m.spooled}.")
    ok_first = max(pct(m.first_ws, 95), pct(m.first_sse, 95)) <= 0.005
    ok_final = pct(m.final, 95) <= 0.002 and m.final_saved == n_final and total == m.turns
    ok_cancel = max(m.stops + m.disconnects, default=1) <= 0.1 and not m.missed
    verdict = {True: "met", False: "NOT met"}
    print(
        f"\nGoals: first token {verdict[ok_first]}, final event {verdict[ok_final]}, "
        f"cancel {verdict[ok_cancel]}."
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer turns")
    args, _ = parser.parse_known_args()
    report(asyncio.run(run(args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
