"""The loop's hooks wrap every model and tool call: what observers (ops/observer.py) rely on."""

import asyncio
import contextlib
import contextvars
import time

from pydantic import BaseModel

from agent.exceptions import ModelError
from agent.llm.base import ModelTurn, TextDelta, ToolCall, Usage
from agent.loop import Hooks, Limits, run_turn
from agent.tool import Tool

inside_tool_hook: contextvars.ContextVar[str] = contextvars.ContextVar("inside", default="")


class Recorder(Hooks):
    def __init__(self) -> None:
        self.seen: list[tuple] = []

    @contextlib.contextmanager
    def model_call(self, call):
        try:
            yield
        except BaseException as exc:
            self.seen.append(("model", call.step, type(exc).__name__))
            raise
        self.seen.append(("model", call.step, call.turn.usage.input_tokens, len(call.messages)))

    @contextlib.contextmanager
    def tool_call(self, record):
        token = inside_tool_hook.set(record.call_id)
        try:
            yield
        finally:
            inside_tool_hook.reset(token)
        self.seen.append(("tool", record.name, record.ok, record.duration_ms > 0))


class NoInput(BaseModel):
    pass


async def which_call(params: NoInput) -> str:
    return inside_tool_hook.get()  # the tool runs inside its hook's context


class Script:
    name, offline = "script", False
    max_output_tokens = None

    def __init__(self, fail_second: bool = False) -> None:
        self.fail_second = fail_second

    async def stream(self, messages, tools):
        if messages[-1]["role"] == "user":
            yield ModelTurn("", [ToolCall("call_9", "which_call", "{}")], Usage(11, 1))
            return
        if self.fail_second:
            raise ModelError("down")
        yield TextDelta("done")
        yield ModelTurn("done", [], Usage(22, 2))


TOOLS = [Tool("which_call", "Which call is this?", NoInput, which_call, lambda out: "")]


async def _turn(model, hooks):
    async def emit(event):
        pass

    messages = [{"role": "user", "content": "q"}]
    return await run_turn(
        messages=messages, model=model, tools=TOOLS, limits=Limits(), emit=emit, hooks=hooks
    )


async def test_hooks_wrap_each_model_and_tool_call():
    hooks = Recorder()
    result = await _turn(Script(), hooks)

    assert result.status == "done"
    assert result.tool_calls[0].result == "call_9"
    assert hooks.seen == [
        ("model", 1, 11, 1),
        ("tool", "which_call", True, True),
        ("model", 2, 22, 3),
    ]


async def test_a_failing_model_call_reaches_its_hook():
    hooks = Recorder()
    result = await _turn(Script(fail_second=True), hooks)

    assert result.error_code == "model_error"
    assert hooks.seen[-1] == ("model", 2, "ModelError")


async def nap(params: NoInput) -> str:
    await asyncio.sleep(0.3)
    return "rested"


class ThreeAtOnce:
    """Asks for three tools in one step (they run side by side), then answers."""

    name, offline = "script", False
    max_output_tokens = None

    async def stream(self, messages, tools):
        if messages[-1]["role"] == "user":
            calls = [ToolCall(f"call_{n}", "nap", "{}") for n in range(3)]
            yield ModelTurn("", calls, Usage(1, 1))
            return
        yield ModelTurn("done", [], Usage(1, 1))


async def test_the_logged_tool_time_is_never_more_than_the_turn():
    """It was the sum of the tools' times: three side by side made it three times the turn's."""
    from ops.observer import TurnHooks

    hooks = TurnHooks(
        tracer=None,
        model="script",
        provider="openai",
        conversation_id="c",
        tool_names=frozenset({"nap"}),
        capture=False,
    )
    tools = [Tool("nap", "Rest a moment.", NoInput, nap, lambda out: "")]
    started = time.perf_counter()
    result = await run_turn(
        messages=[{"role": "user", "content": "q"}],
        model=ThreeAtOnce(),
        tools=tools,
        limits=Limits(),
        emit=_ignore,
        hooks=hooks,
    )
    turn_ms = (time.perf_counter() - started) * 1000

    assert [call.result for call in result.tool_calls] == ["rested"] * 3
    assert 0 < hooks.tool_ms <= turn_ms
    assert hooks.model_ms + hooks.tool_ms <= turn_ms


async def _ignore(event) -> None:
    pass
