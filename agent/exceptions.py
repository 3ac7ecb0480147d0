"""Errors meant for the program: they end a turn with a typed `error` event."""


class AgentError(Exception):
    """Base class; `code` is the `error` event's code."""

    code = "internal"


class ModelError(AgentError):
    """The model endpoint failed; the message is safe to show to visitors."""

    code = "model_error"


class MaxStepsExceeded(AgentError):
    """The last permitted model call still asked for tools."""

    code = "max_steps"
