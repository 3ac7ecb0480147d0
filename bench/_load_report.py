"""The tables of bench/chat_load.py."""

from __future__ import annotations

import os

from _common import machine_note, markdown_table, pct

GOAL_DURATION, GOAL_LAG, GOAL_US_PER_TOKEN, GOAL_KIB = 2.4, 0.150, 20.0, 100.0


def report(results: list, load: float, *, tokens: int, ideal: float) -> None:
    print(f"_{machine_note(load)}._\n")
    workers = results[0].workers
    print(
        f"{workers} web process(es); each socket one turn of {tokens} deltas 20 ms apart "
        f"(ideal stream {ideal:.2f} s). Lag: model server writes a token → the client reads "
        "the frame that holds it.\n"
    )
    head = ["mode", "N", "done", "saved", "stream p50 s", "stream p95 s", "lag p50 ms"]
    head += ["lag p95 ms", "frames / stream", "KiB / connection", "upgrade p95 / max s"]
    head += ["failures", "load"]
    rows = []
    for r in results:
        rows.append([
            r.mode, str(r.n), f"{r.done}/{r.n}", "n/a" if r.saved is None else f"{r.saved}/{r.n}",
            f"{pct(r.durations, 50):.2f}", f"{pct(r.durations, 95):.2f}",
            f"{pct(r.lags, 50) * 1000:.0f}", f"{pct(r.lags, 95) * 1000:.0f}",
            f"{r.frames / max(r.n, 1):.0f}",
            f"{(r.plateau_rss - r.idle_rss) / r.n / 1024:.0f}",
            f"{pct(r.upgrades, 95):.2f} / {max(r.upgrades, default=0):.2f}",
            ", ".join(f"{k}: {v}" for k, v in r.failures.items()) or "none",
            f"{r.load:.1f}",
        ])  # fmt: skip
    print(markdown_table(head, rows))
    _cpu_table(results, tokens)
    _ratios(results)
    _goal(results)


def _cpu_table(results: list, tokens: int) -> None:
    groups: list[str] = []
    for r in results:
        groups += [g for g in r.cpu if g not in groups]
    head = ["mode", "N", "window s", "web µs / token", "web ms / turn, whole life"]
    head += ["web cores", "web waiting for a CPU"]
    head += ["streams / web core"]
    head += [f"{g} CPU" for g in groups]
    rows = []
    for r in results:
        cores = r.web_cpu / r.window if r.window else float("nan")
        rows.append([
            r.mode, str(r.n), f"{r.window:.2f}",
            f"{r.web_cpu / (r.n * tokens) * 1e6:.1f}", f"{r.whole_cpu / r.n * 1000:.2f}",
            f"{cores:.2f}",
            f"{sum(v for k, v in r.waiting.items() if k.startswith('web')) / r.window:.0%}"
            if r.window else "n/a",
            f"{r.n / cores:.0f}" if cores else "n/a",
            *(f"{r.cpu.get(g, 0.0) / r.window:.0%}" if r.window else "n/a" for g in groups),
        ])  # fmt: skip
    print("\n" + markdown_table(head, rows))
    print(
        f"\nCPU: seconds of CPU over the streaming window, as a share of one core "
        f"({os.cpu_count()} cores in all); web µs / token: the web processes' CPU over the "
        "window divided by the upstream tokens streamed in it. Web ms / turn, whole life: "
        "the web processes' CPU from the first socket opened to the last turn saved, over N "
        "(handshake, session, turn start, stream, save). Streams / web core: N over "
        "the web cores used (a core carries that many streams at this rate). Waiting: time "
        "the web processes' main threads were runnable but found no free core (the machine "
        "was busy), as a share of one core."
    )


def _ratios(results: list) -> None:
    by = {(r.mode, r.n): r for r in results}
    for r in results:
        base = by.get(("per-delta", r.n))
        if r.mode == "per-delta" or base is None or not r.web_cpu or not base.web_cpu:
            continue
        print(
            f"\nN={r.n}: {r.mode} uses {r.web_cpu / base.web_cpu:.2f}× the web CPU of "
            "per-delta in the same run."
        )


def _goal(results: list) -> None:
    shipped = [r for r in results if r.mode == "coalesced"] or results
    big = max(shipped, key=lambda r: r.n)
    duration, lag = pct(big.durations, 95), pct(big.lags, 95)
    us = big.web_cpu / (big.n * 100) * 1e6
    kib = (big.plateau_rss - big.idle_rss) / big.n / 1024
    met = (
        big.n >= 1000
        and big.done == big.n
        and big.saved == big.n
        and duration <= GOAL_DURATION
        and lag <= GOAL_LAG
        and us <= GOAL_US_PER_TOKEN
        and kib <= GOAL_KIB
    )
    print(
        f"\nGoal (1,000 streams done and saved, p95 stream ≤ {GOAL_DURATION} s, p95 lag ≤ "
        f"{GOAL_LAG * 1000:.0f} ms, web ≤ {GOAL_US_PER_TOKEN:.0f} µs per token, ≤ "
        f"{GOAL_KIB:.0f} KiB per connection): {'met' if met else 'NOT met'} ({big.mode} "
        f"N={big.n}: {big.done} done, {big.saved} saved, p95 stream {duration:.2f} s, p95 lag "
        f"{lag * 1000:.0f} ms, {us:.1f} µs per token, {kib:.0f} KiB per connection)."
    )
