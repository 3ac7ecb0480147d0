"""The agent's exceptions, one hierarchy; `agent.events.error_code` maps them to event codes.

Two readers: `ToolFailure` and `ToolNotFound` are meant for the model (they become a tool
result and the turn goes on); the others are meant for the program and end the turn, or
refuse a frame, with a typed `error` event.
"""


class AgentError(Exception):
    """Base class of every error the agent raises on purpose."""


class ModelError(AgentError):
    """The model endpoint failed; the message is safe to show to visitors.

    `reason` is a word from a closed set (timeout, connection, http_5xx, bad_response, ...):
    what the operator's metrics and spans say failed, where the message is for the visitor.
    `worked`: the endpoint had the whole prompt and may have worked on it, unseen, before the
    call failed (it went quiet past the timeout, or dropped once the request was sent), so
    the call was paid for though nothing came of it.
    """

    def __init__(self, message: str, reason: str = "error", *, worked: bool = False) -> None:
        super().__init__(message)
        self.reason = reason
        self.worked = worked


class TokenBudgetSpent(AgentError):
    """The turn's budgets cannot cover its next model call, or the rest of the answer.

    Raised with the words and the wait of the budget that refused when that budget is the
    address's, the network's or the site's (a day's): a new chat would be refused too, so the
    conversation's "start a new chat" would be untrue. Without them, the conversation's.
    """

    def __init__(self, message: str = "", retry_after: int = 0, reason: str = "") -> None:
        super().__init__(message)
        self.retry_after, self.reason = retry_after, reason


class ConversationFull(AgentError):
    """The conversation holds AGENT_TURNS_PER_CONVERSATION turns: the visitor starts a new one."""


class BadRequest(AgentError):
    """A visitor's frame cannot be taken (message, feedback); the text says why."""


class SharedStateDown(AgentError):
    """Redis, where the limits, budgets and turn locks live, cannot be reached.

    Nothing can be counted, so no turn starts (limits fail closed); the visitor is told to
    ask again in a moment and keeps the question. The message is visitor-safe.
    """


class ToolNotFound(AgentError):
    """Raised by a tool's run for a missing record; the model reads it as an error result."""


class ToolFailure(AgentError):
    """A tool call that failed; `str()` is written for the model to correct itself.

    `reason` says whose fault it was, from a closed set (metrics, spans): the model's
    (`invalid_arguments`, `unknown_tool`, `not_found`), the visitor's (`rate_limited`) or
    ours (`timeout`, `error`).
    """

    def __init__(self, message: str, summary: str, detail: str = "", reason: str = "error") -> None:
        super().__init__(message)
        self.summary, self.detail, self.reason = summary, detail or message, reason
