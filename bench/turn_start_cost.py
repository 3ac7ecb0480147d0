"""What recording a turn at its start costs the time to first token.

    .venv/bin/python bench/turn_start_cost.py            # 2,000 turns per variant
    .venv/bin/python bench/turn_start_cost.py --quick    # 200

Preparing a turn is one trip to the database thread before the model is called (conversation,
number, history, and now the `running` row with the question). This times that trip as the
runner makes it (`database_sync_to_async(turn_prepare)`), with the row and without it
(`turn_start` replaced by a no-op), interleaved so both see the same machine. The difference
is what durability adds to every turn's time to first token.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from _django import django_start, percentile, table


async def measure(count: int) -> dict[str, list[float]]:
    from channels.db import database_sync_to_async

    from agent import turns
    from agent.turns import ChatMessage, Visitor, turn_prepare

    real = turns.turn_start
    timings: dict[str, list[float]] = {"with the running row": [], "without (baseline)": []}
    visitor = Visitor(session_key="bench", client_ip="127.0.0.1")
    prepare = database_sync_to_async(turn_prepare)
    conversation_ids = {}
    for number in range(count * 2):
        variant = "with the running row" if number % 2 else "without (baseline)"
        turns.turn_start = real if number % 2 else (lambda **_: None)
        message = ChatMessage(
            content=f"question {number}", conversation_id=conversation_ids.get(variant)
        )
        started = time.perf_counter()
        prepared = await prepare(message=message, visitor=visitor)
        timings[variant].append(time.perf_counter() - started)
        if number % 20 < 2:  # a new conversation now and then, so history stays short
            conversation_ids.pop(variant, None)
        else:
            import uuid

            conversation_ids[variant] = uuid.UUID(prepared.conversation_id)
    turns.turn_start = real
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    django_start()
    timings = asyncio.run(measure(200 if args.quick else args.turns))
    rows = []
    for name, values in timings.items():
        values = values[len(values) // 10 :]  # the first tenth warms connections and caches
        rows.append(
            [name, len(values)] + [f"{percentile(values, p) * 1000:.3f}" for p in (50, 95, 99)]
        )
    added = float(rows[0][3]) - float(rows[1][3])
    print(table(["turn preparation", "n", "p50 ms", "p95 ms", "p99 ms"], rows))
    print(f"\nAdded to p95 time to first token: {added:.3f} ms (goal <= 1 ms)")


if __name__ == "__main__":
    main()
