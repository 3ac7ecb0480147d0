"""The agent loop: one framework-free async function that runs one chat turn."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import ValidationError

from agent import events
from agent.answered import turn_answered, turn_declined
from agent.citations import articles_gather, citations_find
from agent.exceptions import (
    ModelError,
    SharedStateDown,
    TokenBudgetSpent,
    ToolFailure,
    ToolNotFound,
)
from agent.llm.base import ChatModel, ModelTurn, Retried, TextDelta, ToolCall, Usage, Waiting
from agent.prompts import STEP_LIMIT_NUDGE
from agent.small_talk import is_small_talk
from agent.text import ShownPieces, without_tags
from agent.tokens import TextCount, tokens_estimate
from agent.tool import Tool
from agent.tool_arguments import arguments_parse, validation_describe

logger = logging.getLogger(__name__)

Emit = Callable[[dict], Awaitable[None]]
# What a declined answer adds for the reader to try instead: (question, answer) -> text or "".
Suggest = Callable[[str, str], Awaitable[str]]
# Asked before each model call: may the turn have spent this many tokens once it is done?
# It may raise TokenBudgetSpent instead of saying no, with the refusing budget's own words.
Budget = Callable[[int], Awaitable[bool]]

Status = Literal["running", "done", "max_steps", "error", "cancelled"]
INTERNAL_MESSAGE = "Something went wrong while answering. Please try again."


class VisitorGone(asyncio.CancelledError):
    """The event sink found the visitor gone (a reload closed the socket before its disconnect
    arrived). A CancelledError, so the turn ends exactly as when the disconnect comes first."""


@dataclass(frozen=True)
class Limits:
    """Per-turn limits; `on_max_steps="final_answer"` buys one last tool-less model call."""

    max_steps: int = 5
    tool_timeout: float = 10.0
    tool_concurrency: int = 4
    on_max_steps: Literal["error", "final_answer"] = "error"
    output_tokens: int = 1000  # what one model call's answer is counted as, before it starts
    max_tool_calls: int = 8  # run per step; the model hears that the rest were not run

    def __post_init__(self) -> None:
        if min(self.max_steps, self.tool_concurrency, self.max_tool_calls) < 1 or (
            self.tool_timeout <= 0
        ):
            raise ValueError(f"invalid agent limits: {self}")


# Calls of one reply kept at all (recorded, shown, answered), when the run cap is lower.
MAX_CALLS_KEPT = 64
CANCELLED_CALL = "cancelled"  # a ToolRecord's error when the turn was cancelled as it ran
# How the error of a call refused for its arguments begins: the model's mistake, never run.
INVALID_ARGUMENTS, NOT_AN_OBJECT = "Error: invalid arguments for ", "Error: arguments for "


@dataclass
class ToolRecord:
    """One tool call, for the audit trail; `result` is what the model read (also on error)."""

    step: int
    call_id: str
    name: str
    arguments: dict | str
    result: Any = None
    ok: bool = False
    error: str = ""
    failure: str = ""  # ToolFailure.reason when it failed: timeout, invalid_arguments, ...
    executed: bool = True
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    duration_ms: float = 0.0


@dataclass
class TurnResult:
    """Everything a turn produced; `status` is "running" until the turn ends.

    `answer` is all text streamed to the visitor (every step's), `messages` the assistant and
    tool messages to keep as history, `articles` those gathered from tool outputs.
    """

    status: Status = "running"
    steps: int = 0
    usage: Usage = field(default_factory=Usage)  # what the budget is charged
    # The estimates in `usage` no endpoint billed: calls refused before answering (an HTTP
    # error), or the offline model's. The budget keeps them; the turn's record does not.
    unbilled: Usage = field(default_factory=Usage)
    # The estimates in `usage` that stood in for a report the endpoint never sent (a Stop, a
    # cut stream): billed, but not as reported. Every call's `ModelCall.estimated`, summed.
    estimated: Usage = field(default_factory=Usage)
    answer: str = ""
    messages: list[dict] = field(default_factory=list)
    tool_calls: list[ToolRecord] = field(default_factory=list)
    citations: list[dict] = field(default_factory=list)
    articles: list[dict] = field(default_factory=list)
    # article_id -> the excerpt and section url of its first search hit, for the visitor's sources
    passages: dict[Any, dict] = field(default_factory=dict)
    error_code: str = ""
    error: str = ""
    first_token_at: float | None = None
    answered: bool = False
    declined: bool | None = None  # the final model call's own word on it (ModelTurn.declined)
    # The current step's deltas, until the step ends and joins them into `answer`.
    streaming: list[str] = field(default_factory=list)
    # The model call in flight: its prompt and what it has written so far, until it joins
    # `usage` (its end, or an estimate when cut): what a checkpoint counts it as spent.
    in_flight: int = 0

    @property
    def billed(self) -> Usage:
        """The tokens the endpoints were paid for, reported or estimated (for the record)."""
        return Usage(
            self.usage.input_tokens - self.unbilled.input_tokens,
            self.usage.output_tokens - self.unbilled.output_tokens,
        )

    def text_so_far(self) -> str:
        """Everything shown to the visitor so far, mid-step included (for checkpoints)."""
        return self.answer + "".join(self.streaming) if self.streaming else self.answer

    def spent_so_far(self) -> int:
        """The tokens the turn has spent so far, the call in flight included (for checkpoints)."""
        return self.usage.total + self.in_flight


@dataclass(slots=True)
class ModelCall:
    """One model call as observers see it: `turn` is set once the stream has finished."""

    step: int
    messages: list[dict]
    turn: ModelTurn | None = None
    # What the budget was charged beyond the endpoint's report, for observers to count: a call
    # that reported no usage (Stop, a cut stream; not one the endpoint refused before
    # answering), and the attempts abandoned to a silence before the one that answered.
    estimated: Usage | None = None
    # The output the call streamed (text, tool arguments), counted as it came: beside an
    # estimate that stood in for a report, what the reader was actually given.
    written: int = 0


_NOTHING = contextlib.nullcontext()


class Hooks:
    """Observers of a turn's model and tool calls (metrics, traces: see ops/observer.py).

    Each method returns a context manager that wraps the call, so an observer sees its
    start, its end and any exception. This base observes nothing and costs almost nothing.
    """

    def model_call(self, call: ModelCall) -> AbstractContextManager:
        return _NOTHING

    def tool_call(self, record: ToolRecord) -> AbstractContextManager:
        return _NOTHING


NO_HOOKS = Hooks()


async def run_turn(
    *,
    messages: list[dict],
    model: ChatModel,
    tools: Sequence[Tool],
    limits: Limits,
    emit: Emit,
    conversation_id: str = "",
    on_result: Callable[[TurnResult], None] | None = None,
    hooks: Hooks = NO_HOOKS,
    budget: Budget | None = None,
    suggest: Suggest | None = None,
) -> TurnResult:
    """Run one turn: call the model, run the tools it asks for, repeat, end with one event.

    Emits `text`, `tool_start`, `tool_end`, `citation` and exactly one of `done`/`error`
    (never `start`: the transport sends it). `on_result` receives the mutable result at
    once, so a caller that cancels the task still holds the partial record. `hooks`
    observe each model and tool call. `budget` is asked before each model call, and again
    whenever a streaming answer outgrows what it granted, to cover what the turn will have
    spent; when it cannot, the call is not made (or its stream is closed) and the turn ends
    with `rate_limited`. `suggest(question, answer)` gives what a declined answer adds for
    the reader to try instead ("" for nothing); it is text, never a citation.

    Raises:
        asyncio.CancelledError: when cancelled, after closing the stream and the tool tasks.
    """
    result = TurnResult()
    if on_result is not None:
        on_result(result)
    convo = list(messages)
    # A greeting answered with the blog's newest articles listed them, under "Sources": a
    # reader who said "hi" asked nothing those articles answer. Small talk cites nothing.
    question = _question(messages)
    cites = not is_small_talk(question)
    ending = _Ending(conversation_id, question, cites, suggest)
    schemas = [tool.schema() for tool in tools] or None
    spending = _Spending(budget, result, limits.output_tokens)
    try:
        for step in range(1, limits.max_steps + 1):
            turn = _kept(await _model_step(model, convo, schemas, emit, spending, hooks), limits)
            if not turn.tool_calls:
                _append(convo, result, {"role": "assistant", "content": without_tags(turn.text)})
                result.declined = turn.declined
                return await _finish(result, "done", emit, ending)
            if step == limits.max_steps:
                break
            await _tool_step(step, turn, tools, limits, emit, result, convo, hooks)
        unexecuted = [_unexecuted(limits.max_steps, call) for call in turn.tool_calls]
        result.tool_calls += unexecuted
        await _not_run(unexecuted, emit)
        if limits.on_max_steps == "error":
            message = (
                f"I reached the limit of {limits.max_steps} steps before finishing the answer."
            )
            if result.articles:
                message += " These articles may help:"
            return await _fail(result, emit, events.MAX_STEPS, message)
        # One more call without tools. It ends with `done` (the visitor gets an answer), but
        # the status stays "max_steps" so the admin sees the limit cut the tool work short.
        result.error = "Step limit reached; answered without the last tool calls."
        nudge = {"role": "user", "content": STEP_LIMIT_NUDGE}
        turn = _kept(await _model_step(model, [*convo, nudge], None, emit, spending, hooks), limits)
        # Offered no tools, a model may still ask for some: recorded and shown as not run, as
        # the stopped calls above (they were dropped, and the audit lacked what it asked).
        late = [_unexecuted(limits.max_steps + 1, call) for call in turn.tool_calls]
        result.tool_calls += late
        await _not_run(late, emit)
        _append(convo, result, {"role": "assistant", "content": without_tags(turn.text)})
        result.declined = turn.declined
        return await _finish(result, "max_steps", emit, ending)
    except asyncio.CancelledError:
        result.status, result.error_code = "cancelled", events.CANCELLED
        raise
    except ModelError as exc:
        message = str(exc) or "The model failed."
        return await _fail(result, emit, events.error_code(exc), message, **events.setup(exc))
    except SharedStateDown as exc:
        # The budget could not be asked for more (Redis is down): what was shown is kept, and
        # the visitor is told to ask again in a moment, not that something broke.
        return await _fail(result, emit, events.error_code(exc), str(exc))
    except TokenBudgetSpent as exc:
        message = str(exc) or "This answer reached its token budget before it was finished."
        if result.articles:
            message += " These articles may help:"
        wait = {"retry_after": exc.retry_after, "reason": exc.reason} if exc.retry_after else {}
        return await _fail(result, emit, events.RATE_LIMITED, message, **wait)
    except Exception as exc:
        logger.exception("agent turn failed")
        detail = f"{type(exc).__name__}: {exc}"  # for the admin; the visitor sees less
        try:
            await _fail(result, emit, events.INTERNAL, INTERNAL_MESSAGE)
        finally:  # even when the failure was the transport itself and emitting fails again
            result.status, result.error_code, result.error = "error", events.INTERNAL, detail
        return result


class _Spending:
    """What the turn has spent, and what its budget has granted so far (None: no budget)."""

    def __init__(self, budget: Budget | None, result: TurnResult, answer_tokens: int) -> None:
        self.budget, self.result, self.answer_tokens = budget, result, answer_tokens
        self.granted = 0
        # What the reader was shown, over every call of the turn: an invisible run may
        # straddle two calls with a tool step between (ShownPieces).
        self.shown = ShownPieces()

    async def cover(self, tokens: int) -> None:
        """Have the budget grant `tokens` in all, or raise TokenBudgetSpent."""
        if self.budget is None or tokens <= self.granted:
            return
        if not await self.budget(tokens):
            raise TokenBudgetSpent
        self.granted = tokens


async def _model_step(
    model: ChatModel,
    convo: list[dict],
    schemas: list[dict] | None,
    emit: Emit,
    spending: _Spending,
    hooks: Hooks,
) -> ModelTurn:
    """Stream one model call, forwarding text deltas; return its final ModelTurn.

    The call starts only when the budget covers what the turn spent, this prompt (tools
    included) and an answer of `answer_tokens`.
    """
    result = spending.result
    prompt = tokens_estimate(_json(convo)) + tokens_estimate(_json(schemas or []))
    await spending.cover(result.usage.total + prompt + spending.answer_tokens)
    result.steps += 1
    call = ModelCall(result.steps, convo)
    try:
        with hooks.model_call(call):
            call.turn = await _model_stream(model, call, schemas, emit, spending, prompt)
    finally:  # cut or not: a cut call's estimate is what the turn's record must say
        if call.estimated is not None:
            result.estimated = result.estimated + call.estimated
    return call.turn


async def _model_stream(
    model: ChatModel,
    call: ModelCall,
    schemas: list[dict] | None,
    emit: Emit,
    spending: _Spending,
    prompt: int,
) -> ModelTurn:
    result = spending.result
    turn: ModelTurn | None = None
    # Joined once: `+=` on an attribute would copy the answer per delta.
    pieces: list[str] = []
    result.streaming = pieces
    written = TextCount()  # the answer and tool arguments so far (tokens_estimate)
    retried = 0  # attempts the endpoint worked on and the adapter gave up (Retried)
    # What each of those is charged: its prompt and, as for any call cut before its end, the
    # thinking it may have been billed for unseen (_cut_charge).
    attempt = Usage(prompt, _cut_charge(model, spending))
    failed = False
    pause_ends = 0.0  # the adapter's pause between attempts (Waiting): no call is out
    result.in_flight = prompt
    try:
        async with contextlib.aclosing(model.stream(call.messages, schemas)) as stream:
            async for item in stream:
                if isinstance(item, Waiting):
                    pause_ends = time.monotonic() + item.seconds
                    continue
                if isinstance(item, ModelTurn):
                    turn = item
                    continue
                if isinstance(item, Retried):
                    # Each attempt was paid for: the next one is sent only when the budget
                    # covers it too, after those abandoned (this one included).
                    sent = result.usage.total + attempt.total * (1 + retried) + prompt
                    await spending.cover(sent + spending.answer_tokens)
                    retried += 1
                    result.in_flight = attempt.total * retried + prompt + written.tokens
                    continue
                if not item.text:
                    continue
                written.add(item.text)
                result.in_flight = attempt.total * retried + prompt + written.tokens
                # A long answer, or a long tool argument (never shown, as costly), asks for
                # another answer's worth of tokens, or is cut here.
                spent = result.usage.total + result.in_flight
                if spending.budget is not None and spent > spending.granted:
                    await spending.cover(spent + spending.answer_tokens)
                # Tag characters show as nothing yet spell ASCII to the next model: an answer
                # that carries them hands the reader's copy of it an instruction they never saw.
                if isinstance(item, TextDelta) and (shown := spending.shown.shown(item.text)):
                    if result.first_token_at is None:
                        result.first_token_at = time.monotonic()
                    pieces.append(shown)
                    await emit(events.text(shown))
    except ModelError as exc:
        # Not when the endpoint had the prompt and went quiet (or dropped): a question that kept
        # a reasoning model thinking past the timeout was charged its prompt for two attempts
        # and nothing for the third, while the endpoint billed all three their thinking.
        failed = not exc.worked
        raise
    finally:  # also when cancelled: a stopped turn keeps the text it showed
        call.written = written.tokens
        result.answer += "".join(pieces)
        result.streaming = []
        result.in_flight = 0  # in `usage` from here
        # The attempts abandoned to a silence (or a drop) are in no usage report.
        abandoned = Usage(attempt.input_tokens * retried, attempt.output_tokens * retried)
        if turn is None or turn.usage is None:
            # No usage came (Stop, a cut or failed stream, a server that does not report it):
            # the endpoint was still paid, so the estimate is charged, never nothing.
            # Observers count it as spent too, unless the endpoint failed before answering (an
            # HTTP error: nothing to bill) or the model is the offline one (it spends nothing).
            # A visitor's Stop, even before the first token, was read and paid for.
            # Stopped in the pause: no call was out. Failed after it: the next one was (the
            # flag stayed set past the pause, and a last attempt dropped once sent went free).
            waiting = time.monotonic() < pause_ends
            billed = not model.offline and (written.tokens > 0 or not (failed or waiting))
            estimate = Usage(prompt, _written_charge(model, spending, written, billed, turn))
            result.usage = result.usage + estimate + abandoned
            if billed:
                call.estimated = estimate + abandoned
            else:
                result.unbilled = result.unbilled + estimate
                if retried:
                    call.estimated = abandoned
        elif retried:  # the report covers the attempt that answered, not those before it
            result.usage = result.usage + abandoned
            call.estimated = abandoned
    if turn is None:
        raise ModelError("The model ended its response without a result.", "no_result")
    reported = turn.usage  # None: charged its estimate above
    # The offline model spends nothing, and says so.
    if reported is not None and not model.offline:
        charged = _charged(reported, prompt, max(written.tokens, _output_cap(model)))
        if charged != reported:  # observers count the parts the estimate stood in for
            stood_in = Usage(charged.input_tokens - reported.input_tokens,
                             charged.output_tokens - reported.output_tokens)  # fmt: skip
            call.estimated = stood_in + call.estimated
        reported = charged
    result.usage = result.usage + reported
    return turn


def _written_charge(
    model: ChatModel,
    spending: _Spending,
    written: TextCount,
    billed: bool,
    turn: ModelTurn | None,
) -> int:
    """The output tokens charged for a call the endpoint never reported.

    A call cut before its end (Stop, a broken stream) may have paid for thinking no stream
    showed: OpenAI's reasoning models think before their first token and stream none of it.
    Charged only what it showed, a visitor who stopped each answer at its first word spent the
    prompt alone while the endpoint billed thousands of tokens. So a cut call counts as at
    least its answer's share, held before it started (never more than was granted), or as the
    model's own output cap when one is sent (the most the endpoint can bill).

    A whole call its server did not report counts as the cap too, when one is sent: the cap
    is there for a model that thinks unseen, and such a model behind a server that reports no
    usage was charged its prompt and the words it showed for every answer (a short one, 1,416
    tokens, where the endpoint could bill 3,912).
    """
    if not billed:
        return written.tokens
    if turn is None:  # cut before its end
        return max(written.tokens, _cut_charge(model, spending))
    return max(written.tokens, _output_cap(model))


def _cut_charge(model: ChatModel, spending: _Spending) -> int:
    """The least output a call cut before its end is charged: the model's own output cap when
    one is sent (the most the endpoint can bill), else the answer's share."""
    return _output_cap(model) or spending.answer_tokens


def _output_cap(model: ChatModel) -> int:
    """The most output one call may be billed for, as sent to the endpoint (0: none sent)."""
    return model.max_output_tokens or 0


def _charged(reported: Usage, prompt: int, written: int) -> Usage:
    """The endpoint's report where it can be true, the estimate where it cannot.

    Every call sends a prompt, and a reply that streamed text, thinking or tool calls wrote
    some: a zero there is no count (a gateway that puts an empty usage on every chunk, as
    LiteLLM does for a provider that reports none). Taken as it came, each turn was charged
    nothing, and an address ran turn after turn on a budget it never spent. `written` is the
    estimate of the output, the output cap when one is sent (see _written_charge).
    """
    return Usage(reported.input_tokens or prompt, reported.output_tokens or written)


async def _tool_step(
    step: int,
    turn: ModelTurn,
    tools: Sequence[Tool],
    limits: Limits,
    emit: Emit,
    result: TurnResult,
    convo: list[dict],
    hooks: Hooks,
) -> None:
    """Run the step's tool calls concurrently; append the results in call order."""
    by_name = {tool.name: tool for tool in tools}
    records = [
        ToolRecord(step, c.id, c.name, arguments_parse(c.arguments)) for c in turn.tool_calls
    ]
    result.tool_calls += records
    for record in records:
        await emit(events.tool_start(record.call_id, record.name, record.arguments))
    semaphore = asyncio.Semaphore(limits.tool_concurrency)
    # A reply asking for hundreds of calls ("search each of these 200 words") ran them all:
    # past the cap they are recorded and answered, not run.
    run, skipped = records[: limits.max_tool_calls], records[limits.max_tool_calls :]
    for r in skipped:
        _skip(r, limits.max_tool_calls)
        await emit(events.tool_end(r.call_id, r.name, False, 0.0, "not run", executed=False))
    tasks = [
        asyncio.create_task(_execute(r, by_name, semaphore, limits.tool_timeout, hooks))
        for r in run
    ]
    try:
        for next_done in asyncio.as_completed(tasks):
            r, summary = await next_done
            await emit(events.tool_end(r.call_id, r.name, r.ok, r.duration_ms, summary))
    finally:  # on cancellation (or a failing emit) leave no tool task behind
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks)
    _append(convo, result, _assistant_tool_message(turn))
    for r in records:
        if r.ok:
            articles_gather(r.result, result.articles, result.passages)
        content = r.result if isinstance(r.result, str) else _json(r.result)
        # An article's tag characters show as nothing to its editors yet read as ASCII to a
        # model: instructions hidden in a body or title reached it through every tool. The
        # record keeps what the tool returned; the model reads what a reader sees.
        content = without_tags(content)
        _append(convo, result, {"role": "tool", "tool_call_id": r.call_id, "content": content})


async def _execute(
    record: ToolRecord,
    by_name: dict[str, Tool],
    semaphore: asyncio.Semaphore,
    timeout: float,
    hooks: Hooks,
) -> tuple[ToolRecord, str]:
    """Run one tool call, filling in its record; return the record and a UI summary."""
    async with semaphore:
        record.started_at = datetime.now(UTC)
        started = time.perf_counter()
        with hooks.tool_call(record):  # inside the task, so the tool's own work nests in it
            try:
                tool = by_name.get(record.name)
                record.result = await _call(tool, record, by_name, timeout)
                record.ok, summary = True, _summarize(tool, record.result)
            except ToolFailure as failure:
                record.result, record.error = str(failure), failure.detail
                record.failure = failure.reason
                summary = failure.summary
            except asyncio.CancelledError:
                # Stop pressed or the visitor left: not a fault of the tool.
                record.error = CANCELLED_CALL
                raise
            finally:
                record.duration_ms = (time.perf_counter() - started) * 1000
    return record, summary


async def _call(tool: Tool | None, record: ToolRecord, by_name: dict, timeout: float) -> Any:
    """Validate the arguments and run the tool; raise ToolFailure with a correctable message."""
    name = record.name
    if tool is None:
        known = ", ".join(by_name)
        raise ToolFailure(
            f'Error: unknown tool "{name}". Available tools: {known}.',
            "unknown tool",
            reason="unknown_tool",
        )
    properties = tool.schema()["function"]["parameters"].get("properties", {})
    expected = f"Expected JSON matching: {_json(properties)}"
    if not isinstance(record.arguments, dict):
        got = str(record.arguments)[:200]
        message = f"{NOT_AN_OBJECT}{name} are not a JSON object: {got!r}. {expected}"
        raise ToolFailure(message, "invalid arguments", reason="invalid_arguments")
    try:
        params = tool.input_model.model_validate(record.arguments)
    except ValidationError as exc:
        message = f"{INVALID_ARGUMENTS}{name}: {validation_describe(exc)}. {expected}"
        raise ToolFailure(message, "invalid arguments", reason="invalid_arguments") from None
    try:
        async with asyncio.timeout(timeout):
            return await tool.run(params)
    except TimeoutError:
        message = f"Error: {name} timed out after {timeout:g}s."
        raise ToolFailure(message, "timed out", reason="timeout") from None
    except ToolNotFound as exc:
        raise ToolFailure(f"Error: {exc}", "not found", reason="not_found") from None
    except ToolFailure:
        raise  # written for the model by the tool itself
    except Exception as exc:
        logger.warning("tool %s failed", name, exc_info=True)
        message = f"Error: {name} failed ({type(exc).__name__}). Answer from what you have."
        raise ToolFailure(message, "failed", detail=f"{type(exc).__name__}: {exc}") from None


@dataclass(slots=True, frozen=True)
class _Ending:
    """How a turn's final answer ends: whether it may cite, and what a decline offers."""

    conversation_id: str
    question: str
    cites: bool
    suggest: Suggest | None


async def _finish(result: TurnResult, status: Status, emit: Emit, ending: _Ending) -> TurnResult:
    """Emit what a decline offers instead, the citations found in the answer, then `done`."""
    # A decline may link the nearest article it found ("The nearest is [X](…)"): a pointer,
    # not a source of the answer, so it is no citation (no Sources list, not answered).
    declined = turn_declined(answer=result.answer, declined=result.declined)
    if declined and ending.cites and ending.suggest is not None:
        await _suggestions_add(result, emit, ending.question, ending.suggest)
    may_cite = ending.cites and not declined
    cited_articles = citations_find(result.answer, result.articles) if may_cite else []
    result.citations = [{**a, **result.passages.get(a["article_id"], {})} for a in cited_articles]
    for cited in result.citations:
        await emit(events.citation(**cited))
    result.status = status
    result.answered = turn_answered(
        status=status, answer=result.answer, citations=result.citations, declined=result.declined
    )
    usage = result.usage.as_dict()
    await emit(events.done(ending.conversation_id, result.steps, usage, result.answered))
    return result


async def _suggestions_add(result: TurnResult, emit: Emit, question: str, suggest: Suggest) -> None:
    """Append what the reader could ask instead to a declined answer (shown and kept)."""
    try:
        offered = await suggest(question, result.answer)
    except Exception:  # the decline stands on its own; the offer is a courtesy
        logger.warning("decline suggestions failed", exc_info=True)
        return
    if not offered:
        return
    added = ("\n\n" if result.answer.strip() else "") + offered
    await emit(events.text(added))
    result.answer += added
    last = result.messages[-1] if result.messages else None
    if last is not None and last.get("role") == "assistant" and not last.get("tool_calls"):
        last["content"] = (last.get("content") or "") + added


async def _fail(
    result: TurnResult, emit: Emit, code: str, message: str, **extra: int | str
) -> TurnResult:
    """Emit the terminal `error` event with the articles gathered so far (and `extra`, such as
    retry_after)."""
    result.status = "max_steps" if code == events.MAX_STEPS else "error"
    result.error_code, result.error = code, message
    await emit(events.error(code, message, articles=list(result.articles), **extra))
    return result


def _kept(turn: ModelTurn, limits: Limits) -> ModelTurn:
    """Drop the calls of one reply past MAX_CALLS_KEPT (or the run cap, if higher).

    At ~10 tokens a call, one reply within a turn's budget could ask for 5,000 calls: each was
    a saved row, two events to the visitor and a tool message in the next prompt. The model
    is told of the calls it keeps; those dropped were never seen by anyone but this log.
    """
    kept = max(MAX_CALLS_KEPT, limits.max_tool_calls)
    if len(turn.tool_calls) <= kept:
        return turn
    logger.warning(
        "The model asked for %d tool calls in one reply; the first %d were kept.",
        len(turn.tool_calls),
        kept,
    )
    return replace(turn, tool_calls=turn.tool_calls[:kept])


def _skip(record: ToolRecord, cap: int) -> None:
    record.executed, record.error = False, f"Not executed: more than {cap} calls in one step."
    record.result = (
        f"Error: not executed; at most {cap} tool calls run per step. Answer from the results "
        "you have, or ask for fewer calls."
    )


async def _not_run(records: list[ToolRecord], emit: Emit) -> None:
    """Show the calls the step limit stopped as the turn ends (the panel showed them only
    after a reload, from the transcript): a start and an end, marked not executed."""
    for r in records:
        await emit(events.tool_start(r.call_id, r.name, r.arguments))
        await emit(events.tool_end(r.call_id, r.name, False, 0.0, "not run", executed=False))


def _unexecuted(step: int, call: ToolCall) -> ToolRecord:
    return ToolRecord(
        step, call.id, call.name, arguments_parse(call.arguments), executed=False,
        error="Not executed: the step limit was reached.",
    )  # fmt: skip


def _append(convo: list[dict], result: TurnResult, message: dict) -> None:
    convo.append(message)
    result.messages.append(message)


def _assistant_tool_message(turn: ModelTurn) -> dict:
    calls = [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in turn.tool_calls
    ]
    return {"role": "assistant", "content": without_tags(turn.text) or None, "tool_calls": calls}


def _summarize(tool: Tool | None, output: Any) -> str:
    with contextlib.suppress(Exception):  # a UI nicety must not fail a good result
        return tool.summarize(output) if tool else ""
    return ""


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, default=str)


def _question(messages: list[dict]) -> str:
    """The visitor's message this turn answers: the last message, when it is the visitor's."""
    last = messages[-1] if messages else {}
    content = last.get("content") if last.get("role") == "user" else None
    return content if isinstance(content, str) else ""
