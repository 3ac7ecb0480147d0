"""The loop's model vocabulary: plain dataclasses and the ChatModel protocol."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call requested by the model; `arguments` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str


@dataclass(slots=True)
class Usage:
    """Token counts of one or more model calls."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage | None) -> Usage:
        if other is None:
            return Usage(self.input_tokens, self.output_tokens)
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total,
        }


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of streamed answer text."""

    text: str


@dataclass(frozen=True, slots=True)
class ArgumentsDelta:
    """A piece of a tool call as it streams (its arguments, and its id and name when they
    come): never shown, but counted against the turn's token budget while it arrives (a model
    asked to write a huge argument, or hundreds of calls, is cut)."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of a reasoning model's thinking as it streams: never shown, but paid for, so it
    is counted against the turn's token budget while it arrives, as arguments are."""

    text: str


@dataclass(frozen=True, slots=True)
class Retried:
    """The endpoint took the call and went quiet past the timeout before streaming anything,
    or the connection dropped once the request was sent, and the adapter is about to ask it
    again. The abandoned attempt had the whole prompt and may have worked on it (a model
    thinking without streaming its thoughts, a server that crashed on it): it was paid for, so
    the loop counts it as a call cut before its end (its prompt, and the output cap or the
    answer's share), and holds the next attempt's, before the call is sent again."""


@dataclass(frozen=True, slots=True)
class Waiting:
    """The adapter pauses `seconds` before asking again: no call is out until then. A Stop in
    the pause is charged no call: it was charged a whole one, prompt and output cap, for a call
    that was never sent. Past the pause the next attempt is out (a failure of that one is
    charged as any call's)."""

    seconds: float = 0.0


@dataclass(slots=True)
class ModelTurn:
    """The complete result of one model call, yielded last by `ChatModel.stream`."""

    text: str
    tool_calls: list[ToolCall]
    usage: Usage | None = None
    # The model that answered, when the server says (traces); not part of what was said.
    model: str = field(default="", compare=False)
    # Whether this text declines, when the model knows (the offline model quotes articles,
    # and a quote may open with "…就找不到"); None: the text is read (agent.answered).
    declined: bool | None = field(default=None, compare=False)


@runtime_checkable
class ChatModel(Protocol):
    """A streaming chat model speaking OpenAI Chat Completions message and tool shapes."""

    name: str
    offline: bool
    # The most output one call may be billed, sent to the endpoint with each call; None when
    # nothing is sent (the loop then charges a call cut before its end its answer's share).
    max_output_tokens: int | None

    def stream(
        self, messages: list[dict], tools: list[dict] | None
    ) -> AsyncIterator[TextDelta | ArgumentsDelta | ReasoningDelta | Retried | Waiting | ModelTurn]:
        """Yield TextDelta (and, optionally, ArgumentsDelta, ReasoningDelta, Retried and
        Waiting) many times, then exactly one ModelTurn last."""
        ...
