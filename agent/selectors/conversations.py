"""A visitor's own conversation: the history for the model, and what the page restores."""

import re
import uuid

from django.db.models import Prefetch

from agent.loop import INVALID_ARGUMENTS, NOT_AN_OBJECT
from agent.models import Conversation, ToolCall, Turn
from agent.selectors.model_health import turn_failed_setup
from agent.tools import TOOLS
from blog.selectors import article_urls_published

_SUMMARIZE = {tool.name: tool.summarize for tool in TOOLS}
# A failed call's summary as the panel showed it live (the loop's and the tools' ToolFailure
# summaries), read back from how its recorded error begins; any other failure is "failed".
_FAILURES = [
    (re.compile(re.escape(INVALID_ARGUMENTS)), "invalid arguments"),
    (re.compile(re.escape(NOT_AN_OBJECT)), "invalid arguments"),
    (re.compile(r'Error: unknown tool "'), "unknown tool"),
    (re.compile(r"Error: \S+ timed out after "), "timed out"),
    (re.compile(r"Error: no published article has "), "not found"),
    (re.compile(r"Error: too many searches "), "too many searches"),
]


def conversation_get_owned(*, conversation_id: uuid.UUID, session_key: str) -> Conversation | None:
    """The conversation if it belongs to this session; another session's, or one its reader
    deleted, is treated as unknown."""
    return Conversation.objects.owned(session_key).filter(pk=conversation_id).first()


def conversation_history(*, conversation: Conversation, budget_chars: int) -> list[dict]:
    """Earlier questions and answers as chat messages, trimmed oldest first to a budget."""
    turns = conversation.turns.order_by("-index", "-started_at").only("user_message", "answer")
    messages: list[dict] = []
    used = 0
    for turn in turns:
        pair = [{"role": "user", "content": turn.user_message}]
        if turn.answer:
            pair.append({"role": "assistant", "content": turn.answer})
        size = sum(len(m["content"]) for m in pair)
        if used + size > budget_chars:
            break
        messages[:0] = pair
        used += size
    return messages


def conversation_restore(*, conversation: Conversation) -> dict:
    """What the chat panel needs to restore a conversation after a reload."""
    calls = Prefetch(
        "tool_calls",
        queryset=ToolCall.objects.only(
            "turn_id",
            "step",
            "call_id",
            "name",
            "arguments",
            "ok",
            "error",
            "executed",
            "duration_ms",
            "result",
        ),
    )
    turns = list(conversation.turns.order_by("index", "started_at").prefetch_related(calls))
    cited = {
        c.get("article_id")
        for turn in turns
        for c in [*(turn.citations or []), *(turn.listed_articles or [])]
    }
    urls = article_urls_published(ids={i for i in cited if isinstance(i, int)})
    return {
        "conversation_id": str(conversation.pk),
        "page": conversation.page,
        "turns": [_turn_out(turn, urls) for turn in turns],
    }


def citation_now(*, citation: dict, urls: dict[int, str]) -> dict:
    """A saved citation as it stands today: `available` is false once its article is no longer
    published (the panel shows it as text, not a link to a 404), and a renamed article's
    address is the new one.
    """
    url = urls.get(citation.get("article_id"))
    if url is None:
        return {**citation, "available": False}
    old = citation.get("url", "")
    section = citation.get("section_url", "")
    if section and section.startswith(old):
        section = url + section[len(old) :]
    return {**citation, "url": url, "section_url": section, "available": True}


def _turn_out(turn: Turn, urls: dict[int, str]) -> dict:
    return {
        "turn": turn.index,
        "user_message": turn.user_message,
        "answer": turn.answer,
        "status": turn.status,
        "error_code": turn.error_code,
        "reason": _turn_reason(turn),
        "steps": turn.step_count,
        "citations": [citation_now(citation=c, urls=urls) for c in turn.citations or []],
        "articles": [citation_now(citation=a, urls=urls) for a in turn.listed_articles or []],
        "answered": turn.answered,
        "vote": turn.vote,
        "comment": turn.feedback_comment,
        "started_at": turn.started_at,
        "tools": [
            {
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
                "ok": call.ok,
                "executed": call.executed,
                "duration_ms": call.duration_ms,
                "summary": _call_summary(call),
            }
            for call in turn.tool_calls.all()
        ],
    }


def _turn_reason(turn: Turn) -> str:
    """ "setup" for a turn the model endpoint refused for the site's settings, as live."""
    return "setup" if turn_failed_setup(error_code=turn.error_code, error=turn.error) else ""


def _call_summary(call: ToolCall) -> str:
    if call.outcome == "cancelled":
        return "cancelled"
    if not call.executed:
        return ""  # the panel says why: the step limit
    return tool_summary(name=call.name, ok=call.ok, result=call.result, error=call.error)


def tool_summary(*, name: str, ok: bool, result: object, error: str = "") -> str:
    """The step's summary as it was shown live ("5 results", "not found", "timed out").

    A call cancelled as it ran (Stop, or the visitor left) is summarized "cancelled" by the
    caller, so the panel shows it stopped rather than failed.
    """
    if not ok:
        # After a reload the chip read "failed" where it had said "invalid arguments".
        return next((summary for start, summary in _FAILURES if start.match(error)), "failed")
    summarize = _SUMMARIZE.get(name)
    if summarize is None:
        return ""
    try:
        return summarize(result)
    except Exception:  # an old row in another shape: the step still restores, without it
        return ""
