"""What the cross-worker rules cost a turn: the shared-state calls of one turn on a real Redis.

A turn makes five calls (message limit, lock, budget reserve on its hold record, then "saving"
with the budget settled, then release): each is one Lua script, one round trip. Printed next
to a bare PING (the floor of one round trip), to the same calls without a hold record, and to
the same calls on the in-process fallback.

    .venv/bin/python bench/shared_state.py [--quick]
"""

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


async def one_turn(index: int, *, record: bool = True) -> None:
    """As the runner does it: the hold on the turn's hold record (agent/holds.py), settled in
    the "saving" call; without `record`, as before hold records (nothing for recovery)."""
    from agent import ratelimit
    from agent.leases import TurnLease

    session, ip = f"s{index}", f"10.0.{index % 250}.{index % 200}"
    await ratelimit.message_allow(session_key=session, client_ip=ip)
    lease = TurnLease(conversation_id=f"c{index}", session_key=session)
    await lease.acquire()
    turn_id = f"t{index}-{record}" if record else ""
    budget = await ratelimit.budget_reserve(
        conversation_id=f"c{index}", client_ip=ip, turn_id=turn_id
    )
    await lease.saving(
        ratelimit.budget_settlement(budget=budget, conversation_id=f"c{index}", tokens=150)
    )
    await lease.release()


async def one_turn_unrecorded(index: int) -> None:
    await one_turn(index, record=False)


async def timed(call, turns: int) -> list[float]:
    samples = []
    for index in range(turns):
        started = time.perf_counter()
        await call(index)
        samples.append((time.perf_counter() - started) * 1e6)
    return sorted(samples)


def row(name: str, samples: list[float]) -> str:
    p50, p95 = samples[len(samples) // 2], samples[int(len(samples) * 0.95)]
    return f"| {name} | {p50:.0f} | {p95:.0f} |"


async def measure(turns: int, url: str) -> None:
    import django
    import redis.asyncio as redis
    from django.conf import settings

    django.setup()
    client = redis.from_url(url)
    ping = await timed(lambda _i: client.ping(), turns)
    settings.REDIS_URL = url
    on_redis = await timed(one_turn, turns)
    unrecorded = await timed(one_turn_unrecorded, turns)
    settings.REDIS_URL = ""
    local = await timed(one_turn, turns)
    await client.aclose()
    print("| shared state per turn | p50 µs | p95 µs |\n|---|---|---|")
    print(row("one Redis round trip (PING)", ping))
    print(row("a turn's 5 calls on Redis", on_redis))
    print(row("the same without a hold record", unrecorded))
    print(row("a turn's 5 calls in process (no REDIS_URL)", local))
    print(
        f"\n{turns} turns; Redis on loopback; ratio Redis/PING at p50: "
        f"{on_redis[len(on_redis) // 2] / ping[len(ping) // 2]:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    turns = 300 if parser.parse_args().quick else 5000
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("bench/shared_state.py needs redis-server (apt-get install redis-server)")
    with tempfile.TemporaryDirectory() as data:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", data, "--save", ""]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        try:
            time.sleep(0.5)
            asyncio.run(measure(turns, f"redis://127.0.0.1:{port}/0"))
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
