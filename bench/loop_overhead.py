"""How much time does the agent loop itself add per step?

Scenario, the same for every framework: the model asks for one tool call, the tool answers
at once, then the model streams the answer as 20 text deltas. The models are in-process
scripts (no sleeps, no network), so what remains is the framework's own work per turn.

    python bench/loop_overhead.py [--turns 2000]

Peers (openai-agents, pydantic-ai) are optional: `pip install openai-agents pydantic-ai-slim`.
A peer that is missing or fails is reported in its row instead of a number.

A second table prices Docent's own instruments (ops/observer.py) on the same turn: the loop
without hooks, as production runs with OTEL_EXPORTER_OTLP_ENDPOINT unset (metrics only), and
with tracing on (the OpenTelemetry SDK's batch processor, an exporter that discards).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pydantic import BaseModel, ConfigDict, Field  # noqa: E402

from agent.llm.base import ModelTurn, TextDelta, ToolCall, Usage  # noqa: E402
from agent.loop import Limits, run_turn  # noqa: E402
from agent.tool import Tool  # noqa: E402

QUESTION = "How do agent loops end?"
ARGUMENTS = '{"query": "agent loop"}'
PIECES = [f"word{i} " for i in range(20)]
HITS = [{"article_id": 2, "title": "Anatomy", "url": "/articles/anatomy/", "excerpt": "..."}]
STEPS = 2  # model calls per turn
LIMITS = Limits()


async def search(query: str) -> list[dict]:
    return HITS


# --- docent ---


class SearchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(description="What to look for.")


class DocentScript:
    name, offline = "scripted", False
    max_output_tokens = None

    async def stream(self, messages, tools):
        if messages[-1]["role"] == "user":
            call = ToolCall("call_1", "search_knowledge_base", ARGUMENTS)
            yield ModelTurn("", [call], Usage(10, 5))
            return
        for piece in PIECES:
            yield TextDelta(piece)
        yield ModelTurn("".join(PIECES), [], Usage(10, 5))


async def run_search(params: SearchIn) -> list[dict]:
    return await search(params.query)


TOOLS = [Tool("search_knowledge_base", "Search.", SearchIn, run_search, lambda out: "1 result")]
USER = [{"role": "user", "content": QUESTION}]


async def noop(event: dict) -> None:
    pass


async def docent_turn() -> None:
    result = await run_turn(
        messages=USER, model=DocentScript(), tools=TOOLS, limits=LIMITS, emit=noop
    )
    check(result.status == "done" and result.steps == STEPS, "docent")


async def bare_turn() -> None:
    """The scripted model and tool alone, no framework: the baseline subtracted from all."""
    async for _ in DocentScript().stream(USER, None):
        pass
    await search("agent loop")
    async for _ in DocentScript().stream([*USER, {"role": "tool"}], None):
        pass


def observed(tracer) -> Callable[[], Awaitable[None]]:
    """A docent turn inside the runner's TurnObservation: metrics, and spans when `tracer`."""
    from ops import tracing
    from ops.observer import TurnObservation

    async def turn() -> None:
        tracing.reset(tracer)
        with TurnObservation(turn_id="t", conversation_id="c", index=1) as seen:
            hooks = seen.hooks(model=DocentScript(), tool_names=[TOOLS[0].name], capture=False)
            result = await run_turn(
                messages=USER, model=DocentScript(), tools=TOOLS, limits=LIMITS, emit=noop,
                hooks=hooks,
            )  # fmt: skip
            seen.finish(status=result.status, first_token_ms=1.0, duration_ms=2.0,
                        input_tokens=20, output_tokens=10, error_code="")  # fmt: skip
        check(result.status == "done" and (seen.trace_id != "") == (tracer is not None), "ops")

    return turn


def discarding_tracer():
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    from ops import tracing

    class Discard(SpanExporter):
        def export(self, spans):
            return SpanExportResult.SUCCESS

    return tracing.tracer_build(Discard())


def check(ok: bool, label: str) -> None:
    if not ok:
        raise RuntimeError(f"{label}: the scripted turn did not complete as expected")


# --- openai-agents: a Model streaming Responses events from the same script ---


def openai_agents() -> Callable[[], Awaitable[None]]:
    from agents import Agent, Model, RunConfig, Runner, function_tool, set_tracing_disabled
    from agents.testing import assistant_message, function_call
    from openai.types.responses import Response, ResponseCompletedEvent, ResponseTextDeltaEvent

    set_tracing_disabled(True)  # no exporter: measure the loop, not the telemetry
    delta_fields = {"type": "response.output_text.delta", "item_id": "m", "logprobs": []}
    delta_fields |= {"output_index": 0, "content_index": 0}

    def completed(output: list, seq: int) -> ResponseCompletedEvent:
        fields = {"id": "r", "created_at": 0, "model": "m", "object": "response", "tools": []}
        response = Response(**fields, output=output, tool_choice="auto", parallel_tool_calls=True)
        return ResponseCompletedEvent(
            type="response.completed", response=response, sequence_number=seq
        )

    class Script(Model):
        async def get_response(self, *args, **kwargs):
            raise NotImplementedError("the bench streams")

        async def stream_response(self, system_instructions, input, *args, **kwargs):
            last = input[-1] if isinstance(input, list) else {"role": "user"}
            if last.get("type") != "function_call_output":
                yield completed(
                    [function_call("search_knowledge_base", ARGUMENTS, call_id="call_1")], 0
                )
                return
            for seq, piece in enumerate(PIECES):
                yield ResponseTextDeltaEvent(**delta_fields, delta=piece, sequence_number=seq)
            yield completed([assistant_message("".join(PIECES))], len(PIECES))

    @function_tool
    async def search_knowledge_base(query: str) -> list[dict]:
        """Search the blog."""
        return await search(query)

    agent = Agent(
        name="docent",
        instructions="Answer from the tools.",
        model=Script(),
        tools=[search_knowledge_base],
    )
    config = RunConfig(tracing_disabled=True)

    async def turn() -> None:
        result = Runner.run_streamed(agent, QUESTION, run_config=config)
        async for _ in result.stream_events():
            pass
        check(result.final_output == "".join(PIECES), "openai-agents")

    return turn


# --- pydantic-ai: FunctionModel with a stream_function playing the same script ---


def pydantic_ai() -> Callable[[], Awaitable[None]]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

    async def stream_function(messages: list, info: AgentInfo):
        if not any(isinstance(part, ToolReturnPart) for part in messages[-1].parts):
            call = DeltaToolCall(
                name="search_knowledge_base", json_args=ARGUMENTS, tool_call_id="call_1"
            )
            yield {0: call}
            return
        for piece in PIECES:
            yield piece

    agent = Agent(
        FunctionModel(stream_function=stream_function), instructions="Answer from the tools."
    )

    @agent.tool_plain
    async def search_knowledge_base(query: str) -> list[dict]:
        """Search the blog."""
        return await search(query)

    async def turn() -> None:
        async with agent.run_stream_events(QUESTION) as run:
            async for _ in run:
                pass
        check(run.result.output == "".join(PIECES), "pydantic-ai")  # type: ignore[union-attr]

    return turn


async def measure(turn: Callable[[], Awaitable[None]], turns: int) -> float:
    """Seconds per turn, after a warm-up."""
    for _ in range(max(turns // 20, 10)):
        await turn()
    started = time.perf_counter()
    for _ in range(turns):
        await turn()
    return (time.perf_counter() - started) / turns


async def main(turns: int) -> None:
    baseline = await measure(bare_turn, turns)
    rows: list[tuple[str, float | str]] = [("docent", await measure(docent_turn, turns))]
    for label, factory in (("openai-agents", openai_agents), ("pydantic-ai", pydantic_ai)):
        try:
            rows.append((label, await measure(factory(), turns)))
        except Exception as exc:  # report, never fake a number
            reason = " ".join(f"{type(exc).__name__}: {exc}".split())
            rows.append((label, f"could not run: {reason}"[:90]))
    docent = rows[0][1]
    print(
        f"{turns} turns each; 1 tool call + 20 streamed deltas = {STEPS} steps per turn; "
        f"bare script (subtracted) {baseline * 1e3:.4f} ms/turn; Python {sys.version.split()[0]}"
    )
    print(f"{'framework':<15} | {'ms per turn':>11} | {'ms per step':>11} | ratio vs docent")
    print(f"{'-' * 15}-|-{'-' * 11}-|-{'-' * 11}-|-{'-' * 15}")
    for label, value in rows:
        if isinstance(value, str):
            print(f"{label:<15} | {value}")
            continue
        overhead = value - baseline
        ratio = overhead / (docent - baseline)  # type: ignore[operator]
        print(
            f"{label:<15} | {overhead * 1e3:>11.3f} | {overhead * 1e3 / STEPS:>11.3f} | "
            f"{ratio:>14.1f}x"
        )
    await instruments(turns, baseline, docent)  # type: ignore[arg-type]


async def instruments(turns: int, baseline: float, docent: float) -> None:
    """The cost of metrics and tracing on the same turn, next to the loop without hooks."""
    rows = [("no hooks (loop alone)", docent)]
    try:
        rows.append(("tracing unset (metrics)", await measure(observed(None), turns)))
        rows.append(("tracing on (spans)", await measure(observed(discarding_tracer()), turns)))
    except ImportError as exc:  # prometheus-client or the OpenTelemetry SDK not installed
        print(f"\ninstruments not measured: {exc}")
        return
    print(f"\n{'instruments':<24} | {'ms per turn':>11} | {'ms per step':>11} | added per turn")
    print(f"{'-' * 24}-|-{'-' * 11}-|-{'-' * 11}-|-{'-' * 14}")
    for label, value in rows:
        overhead = value - baseline
        added = (value - docent) * 1e3
        print(
            f"{label:<24} | {overhead * 1e3:>11.3f} | {overhead * 1e3 / STEPS:>11.3f} | "
            f"{added:>+11.3f} ms"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="500 turns")
    args = parser.parse_args()
    asyncio.run(main(500 if args.quick else args.turns))
