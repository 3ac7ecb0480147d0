"""Metrics and spans for one chat turn, hooked into the framework-free loop (agent.loop.Hooks).

The runner opens a `TurnObservation` around each turn: the root span (`invoke_agent docent`),
the log fields, the active-streams gauge. The loop then calls its hooks around each model
call (`chat {model}`, a CLIENT span) and each tool call (`execute_tool {name}`), which count
the metrics whether or not tracing is on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from contextlib import ExitStack
from typing import Any

from django.conf import settings

from agent.loop import Hooks, ModelCall, ToolRecord
from ops import logs, metrics, tracing

OPERATION = "gen_ai.operation.name"

logger = logging.getLogger(__name__)


class TurnObservation:
    """The instruments of one turn; use as a context manager around the whole turn."""

    def __init__(self, *, turn_id: str, conversation_id: str, index: int) -> None:
        self.turn_id, self.conversation_id, self.index = turn_id, conversation_id, index
        self.tracer = tracing.tracer()
        self.span: Any = None
        self.trace_id = ""
        self.span_id = ""  # the root span's, for a recovery's span to name as its parent
        self.calls: TurnHooks | None = None  # the hooks handed to the loop: their timings
        self._stack = ExitStack()

    def __enter__(self) -> TurnObservation:
        metrics.ACTIVE_STREAMS.inc()
        self._stack.callback(metrics.ACTIVE_STREAMS.dec)
        if self.tracer is not None:
            self.span = self.tracer.start_span(
                f"invoke_agent {tracing.AGENT_NAME}",
                context=tracing.root(),  # one trace per turn, even on a long-lived socket
                attributes={
                    OPERATION: "invoke_agent",
                    "gen_ai.agent.name": tracing.AGENT_NAME,
                    "gen_ai.conversation.id": self.conversation_id,
                    "docent.turn.id": self.turn_id,
                    "docent.turn.index": self.index,
                },
            )
            self._stack.callback(self.span.end)
            self._stack.enter_context(tracing.current(self.span))
            self.trace_id = tracing.trace_id_hex(self.span)
            self.span_id = tracing.span_id_hex(self.span)
        self._stack.enter_context(
            logs.bound(
                turn_id=self.turn_id, conversation_id=self.conversation_id, trace_id=self.trace_id
            )
        )
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    def hooks(self, *, model: Any, tool_names: list[str], capture: bool | None = None) -> Hooks:
        """The loop's hooks for this turn's model and tools (`capture`: default from settings)."""
        provider = "docent_offline" if model.offline else "openai"
        if self.span is not None:
            self.span.set_attribute("gen_ai.provider.name", provider)
            self.span.set_attribute("gen_ai.request.model", model.name)
        self.calls = TurnHooks(
            tracer=self.tracer,
            model=model.name,
            provider=provider,
            conversation_id=self.conversation_id,
            tool_names=frozenset(tool_names),
            capture=settings.OTEL_CAPTURE_MESSAGE_CONTENT if capture is None else capture,
        )
        return self.calls

    def finish(
        self,
        *,
        status: str,
        first_token_ms: float | None,
        duration_ms: float,
        input_tokens: int,
        output_tokens: int,
        error_code: str,
        answered: bool = False,
        steps: int = 0,
        error: str = "",
    ) -> None:
        """Count the finished turn, log its one summary line and close its span's attributes."""
        metrics.turn_observe(
            status=status,
            first_token_ms=first_token_ms,
            duration_ms=duration_ms,
            error_code=error_code,
        )
        if status == "done":
            metrics.child(metrics.TURNS_ANSWERED, str(answered).lower()).inc()
        tokens = (input_tokens, output_tokens)
        self._log(status, error_code, error, answered, steps, first_token_ms, duration_ms, tokens)
        if self.span is None:
            return
        self.span.set_attribute("docent.turn.status", status)
        self.span.set_attribute("gen_ai.usage.input_tokens", input_tokens)
        self.span.set_attribute("gen_ai.usage.output_tokens", output_tokens)
        if first_token_ms is not None:
            self.span.set_attribute("docent.turn.time_to_first_token_ms", first_token_ms)
        # The statuses the log line calls failed (WARNING), so a trace search finds the same turns.
        if status in ("error", "max_steps", "interrupted") and error_code:
            from opentelemetry.trace import Status, StatusCode

            self.span.set_attribute("error.type", error_code)
            self.span.set_status(Status(StatusCode.ERROR, error_code))

    def _log(
        self,
        status: str,
        error_code: str,
        error: str,
        answered: bool,
        steps: int,
        first_token_ms: float | None,
        duration_ms: float,
        tokens: tuple[int, int],
    ) -> None:
        # One line per turn says where its time went (model or tools) and how it ended, so
        # "why was this slow / why did it fail" starts from the log, not from the database.
        calls = self.calls
        data = {
            "status": status,
            "error_code": error_code,
            "answered": answered if status == "done" else None,
            "steps": steps,
            "duration_ms": round(duration_ms),
            "first_token_ms": None if first_token_ms is None else round(first_token_ms),
            "model_ms": round(calls.model_ms) if calls else 0,
            "tool_ms": round(calls.tool_ms) if calls else 0,
            "slowest_tool": calls.slowest[0] if calls and calls.slowest else "",
            # What failed at the endpoint (http_5xx, timeout, bad_response): model_error alone
            # cannot tell an outage from a garbled stream.
            "model_failure": calls.model_failure if calls else "",
            # What the turn cost, so a runaway or an expensive visitor is found in the log.
            "input_tokens": tokens[0],
            "output_tokens": tokens[1],
            # The part of them no endpoint reported: what the budget charged a cut call, and
            # what that call had streamed (a Stop at the first word was charged an answer).
            "estimated_input_tokens": calls.estimated_in if calls else 0,
            "estimated_output_tokens": calls.estimated_out if calls else 0,
            "written_output_tokens": calls.estimated_written if calls else 0,
        }
        ending = status if status != "done" else ("answered" if answered else "declined")
        if error_code and error_code != status:
            ending += f" ({error_code})"
        first = "-" if first_token_ms is None else f"{first_token_ms:.0f} ms"
        line = (
            f"turn {ending} in {duration_ms:.0f} ms: {steps} step{'' if steps == 1 else 's'}, "
            f"first text {first}, "
            f"model {data['model_ms']} ms, tools {data['tool_ms']} ms"
        )
        if data["slowest_tool"]:
            line += f" (slowest {data['slowest_tool']} {calls.slowest[1]:.0f} ms)"
        line += f", tokens {tokens[0]} in {tokens[1]} out"
        if data["estimated_input_tokens"] or data["estimated_output_tokens"]:
            line += (
                f" (estimated, no usage reported: {data['estimated_input_tokens']} in "
                f"{data['estimated_output_tokens']} out, of which {data['written_output_tokens']}"
                " out streamed)"
            )
        failed = status in ("error", "max_steps", "interrupted")
        if data["model_failure"]:
            line += f", model failure {data['model_failure']}"
        if failed and error:
            line += f": {logs.log_text(error)}"  # an exception's text may quote the model's
        logger.log(logging.WARNING if failed else logging.INFO, line, extra={"turn": data})


class TurnHooks(Hooks):
    """Counts and (when tracing) spans for each model and tool call of one turn."""

    def __init__(
        self,
        *,
        tracer: Any,
        model: str,
        provider: str,
        conversation_id: str,
        tool_names: frozenset[str],
        capture: bool,
    ) -> None:
        self.tracer, self.model, self.provider = tracer, model, provider
        self.conversation_id, self.tool_names, self.capture = conversation_id, tool_names, capture
        # Model calls follow one another, so their sum is wall time. Tool calls of one step run
        # side by side: `tool_ms` counts the time at least one was running (a sum could exceed
        # the turn), so model and tool time add up to no more than the turn's own.
        self.model_ms = 0.0
        self.tool_ms = 0.0
        self.slowest: tuple[str, float] | None = None  # (tool, ms)
        self.model_failure = ""  # the last failed model call's reason
        # Tokens charged on estimates (calls with no usage report: Stop, a cut stream), and the
        # output those calls streamed: the turn's record gives their sum as if reported.
        self.estimated_in = self.estimated_out = self.estimated_written = 0
        self._tools_running = 0
        self._tools_since = 0.0

    def tool_began(self) -> None:
        if not self._tools_running:
            self._tools_since = time.perf_counter()
        self._tools_running += 1

    def tool_ended(self) -> None:
        self._tools_running -= 1
        if not self._tools_running:
            self.tool_ms += (time.perf_counter() - self._tools_since) * 1000

    def model_call(self, call: ModelCall) -> _ModelScope:
        return _ModelScope(self, call)

    def tool_call(self, record: ToolRecord) -> _ToolScope:
        return _ToolScope(self, record)


class _ModelScope:
    def __init__(self, hooks: TurnHooks, call: ModelCall) -> None:
        self.hooks, self.call, self.span = hooks, call, None
        self.retries: tuple = ()
        self.started = 0.0

    def __enter__(self) -> None:
        self.started = time.perf_counter()
        hooks = self.hooks
        if hooks.tracer is None:
            return
        from opentelemetry.trace import SpanKind

        attributes = {
            OPERATION: "chat",
            "gen_ai.provider.name": hooks.provider,
            "gen_ai.system": hooks.provider,  # the pre-1.37 name, still read by some backends
            "gen_ai.request.model": hooks.model,
            "gen_ai.conversation.id": hooks.conversation_id,
            "docent.step": self.call.step,
        }
        if hooks.capture:
            attributes["gen_ai.input.messages"] = _messages_json(self.call.messages)
        self.span = hooks.tracer.start_span(
            f"chat {hooks.model}", kind=SpanKind.CLIENT, attributes=attributes
        )
        self.retries = tracing.chat_retries_begin(self.span)

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> None:
        outcome = _outcome(kind)
        metrics.child(metrics.MODEL_CALLS, outcome).inc()
        seconds = time.perf_counter() - self.started
        metrics.child(metrics.MODEL_DURATION, outcome).observe(seconds)
        reason = _model_failure(exc) if outcome == "error" else ""
        if reason:
            metrics.child(metrics.MODEL_ERRORS, reason).inc()
            self.hooks.model_failure = reason
        self.hooks.model_ms += seconds * 1000
        turn = self.call.turn
        # A stopped or cut stream reports no usage, but the endpoint was paid: the estimate
        # the budget was charged counts, so stopping every answer cannot hide the spending.
        # Attempts abandoned to a silence and retried are estimated beside a report (Retried).
        reported = turn.usage if turn is not None else None
        usage = reported + self.call.estimated if reported is not None else self.call.estimated
        estimated = self.call.estimated
        if estimated is not None and estimated.total:
            metrics.child(metrics.TOKENS_ESTIMATED, "input").inc(estimated.input_tokens)
            metrics.child(metrics.TOKENS_ESTIMATED, "output").inc(estimated.output_tokens)
            self.hooks.estimated_in += estimated.input_tokens
            self.hooks.estimated_out += estimated.output_tokens
            self.hooks.estimated_written += self.call.written
            tracing.span_note(
                self.span,
                **{
                    "docent.usage.estimated_input_tokens": estimated.input_tokens,
                    "docent.usage.estimated_output_tokens": estimated.output_tokens,
                    "docent.usage.written_output_tokens": self.call.written,
                },
            )
        if usage is not None:
            metrics.child(metrics.TOKENS, "input").inc(usage.input_tokens)
            metrics.child(metrics.TOKENS, "output").inc(usage.output_tokens)
        if self.span is not None:
            tracing.chat_retries_end(*self.retries)
            _model_span_end(self.span, turn, exc, outcome, reason, self.hooks.capture)


def _model_failure(exc: BaseException | None) -> str:
    """A ModelError's reason (timeout, http_5xx, bad_response, ...); `other` for the rest."""
    return getattr(exc, "reason", "") or "other"


def _model_span_end(
    span: Any, turn: Any, exc: BaseException | None, outcome: str, reason: str, capture: bool
) -> None:
    if turn is not None:
        span.set_attribute("gen_ai.response.model", turn.model or span.attributes.get(
            "gen_ai.request.model", ""))  # fmt: skip
        span.set_attribute(
            "gen_ai.response.finish_reasons", ["tool_calls" if turn.tool_calls else "stop"]
        )
        if turn.usage is not None:
            span.set_attribute("gen_ai.usage.input_tokens", turn.usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", turn.usage.output_tokens)
        if capture:
            message = {"role": "assistant", "content": turn.text, "tool_calls": [
                {"id": c.id, "function": {"name": c.name, "arguments": c.arguments}}
                for c in turn.tool_calls
            ]}  # fmt: skip
            span.set_attribute("gen_ai.output.messages", _messages_json([message]))
    if exc is not None:
        tracing.span_failed(span, reason or outcome)
    span.end()


class _ToolScope:
    def __init__(self, hooks: TurnHooks, record: ToolRecord) -> None:
        self.hooks, self.record, self.span, self.scope = hooks, record, None, None
        self.tool = record.name if record.name in hooks.tool_names else metrics.UNKNOWN_TOOL

    def __enter__(self) -> None:
        hooks = self.hooks
        hooks.tool_began()
        if hooks.tracer is None:
            return
        attributes = {
            OPERATION: "execute_tool",
            "gen_ai.tool.name": self.tool,
            "gen_ai.tool.call.id": self.record.call_id[:100],
            "gen_ai.tool.type": "function",
        }
        if hooks.capture:
            attributes["gen_ai.tool.call.arguments"] = _json(self.record.arguments)
        self.span = hooks.tracer.start_span(f"execute_tool {self.tool}", attributes=attributes)
        # Current inside the tool's task (and its database thread): search queries nest here.
        self.scope = tracing.current(self.span)
        self.scope.__enter__()

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> None:
        record = self.record
        outcome = _outcome(kind)
        if outcome == "ok" and not record.ok:
            # Whose fault: the model's (invalid_arguments, unknown_tool, not_found) or ours
            # (timeout, error). One "error" for all had a model guessing ids look like an outage.
            outcome = record.failure or "error"
        metrics.child(metrics.TOOL_CALLS, self.tool, outcome).inc()
        metrics.child(metrics.TOOL_DURATION, self.tool).observe(record.duration_ms / 1000)
        hooks = self.hooks
        hooks.tool_ended()
        if hooks.slowest is None or record.duration_ms > hooks.slowest[1]:
            hooks.slowest = (self.tool, record.duration_ms)
        if outcome not in ("ok", "cancelled"):
            # The model hears of the failure and the turn goes on, so nothing else would tell the
            # operator (a search timing out on every turn looks like "the blog has no answer").
            logger.warning(
                "tool %s failed (%s) after %.0f ms: %s",
                self.tool,
                outcome,
                record.duration_ms,
                logs.log_text(str(record.error or record.result)),
            )
        if self.span is None:
            return
        self.scope.__exit__(kind, exc, tb)
        if self.hooks.capture:
            self.span.set_attribute("gen_ai.tool.call.result", _json(record.result))
        if outcome != "ok":
            tracing.span_failed(self.span, outcome)
        self.span.end()


def _outcome(kind: type | None) -> str:
    if kind is None:
        return "ok"
    return "cancelled" if issubclass(kind, asyncio.CancelledError) else "error"


def _messages_json(messages: list[dict]) -> str:
    """Chat Completions messages in the GenAI conventions' role + parts shape."""
    converted = []
    for message in messages:
        if message.get("role") == "tool":
            parts = [{"type": "tool_call_response", "id": message.get("tool_call_id"),
                      "response": message.get("content")}]  # fmt: skip
        else:
            text = message.get("content")
            parts = [{"type": "text", "content": text}] if text else []
            parts += [
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": call["function"]["name"],
                    "arguments": call["function"]["arguments"],
                }  # fmt: skip
                for call in message.get("tool_calls") or []
            ]
        converted.append({"role": message.get("role"), "parts": parts})
    return _json(converted)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
