"""A conversation's transcript: turns, steps and tool calls in order, and its JSON export."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cached_property
from typing import Any
from uuid import UUID

from django.conf import settings
from django.utils.translation import gettext, ngettext

from agent.answered import FINISHED
from agent.models import Conversation, ToolCall, Turn, call_outcome
from agent.selectors.answer_html import turn_answers_html
from agent.tools.get_article_detail import get_article_detail
from blog.models import Article

# Results longer than this are folded away behind a <details> in the transcript.
LONG_RESULT_CHARS = 360


def json_text(value: Any) -> str:
    """Return a JSON value as indented text; a plain string stays as it is."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)


@dataclass(frozen=True)
class TranscriptCall:
    call_id: str
    name: str
    step: int
    arguments: Any
    result: Any
    ok: bool
    error: str
    executed: bool
    started_at: datetime
    duration_ms: float
    article_title: str = ""  # the article a get_article_detail call read, named (_named)

    @property
    def outcome(self) -> str:
        return call_outcome(ok=self.ok, executed=self.executed, error=self.error)

    @cached_property
    def arguments_json(self) -> str:
        return json_text(self.arguments)

    @cached_property
    def result_json(self) -> str:
        return "" if self.result is None else json_text(self.result)

    @property
    def result_is_long(self) -> bool:
        return len(self.result_json) > LONG_RESULT_CHARS or self.result_json.count("\n") > 10

    @property
    def result_summary(self) -> str:
        if isinstance(self.result, list):
            count = len(self.result)
            return ngettext("%(count)s item", "%(count)s items", count) % {"count": count}
        if isinstance(self.result, dict):
            count = len(self.result)
            return ngettext("%(count)s field", "%(count)s fields", count) % {"count": count}
        count = len(self.result_json)
        return ngettext("%(count)s character", "%(count)s characters", count) % {
            "count": f"{count:,}"
        }


@dataclass(frozen=True)
class TranscriptStep:
    number: int
    tool_calls: list[TranscriptCall]


@dataclass(frozen=True)
class TranscriptTurn:
    turn: Turn
    steps: list[TranscriptStep]
    answer_html: str = ""  # the answer's Markdown as HTML (turn_answers_html)

    @property
    def tool_call_count(self) -> int:
        return sum(len(step.tool_calls) for step in self.steps)

    @property
    def unanswered(self) -> bool:
        """Finished without an answer (declined or cited nothing): the admin flags it.

        Small talk is never flagged: the visitor asked nothing (agent.selectors.UNANSWERED).
        """
        turn = self.turn
        return turn.status in FINISHED and not turn.answered and not turn.small_talk

    @property
    def ending(self) -> str:
        """How a turn that ended early ended, for a reviewer; "" for the others.

        A stopped or cut-off turn saves no error text, so its transcript ended on the question
        (or half an answer) with nothing but the status pill to say why.
        """
        partial = bool(self.turn.answer)
        if self.turn.status == Turn.Status.CANCELLED:
            if partial:
                return gettext(
                    "Stopped by the visitor (Stop, a reload or leaving the page) while the "
                    "answer was being written: it is shown as far as it got."
                )
            return gettext(
                "Stopped by the visitor (Stop, a reload or leaving the page) before any answer "
                "was written."
            )
        if self.turn.status == Turn.Status.INTERRUPTED:
            return gettext(
                "Cut off when its server process stopped (a restart or a crash) before it "
                "finished; the visitor could ask again."
            )
        return ""

    @property
    def trace_url(self) -> str:
        """The turn's trace in the operators' trace viewer, when OTEL_TRACE_URL_TEMPLATE is set."""
        template = settings.OTEL_TRACE_URL_TEMPLATE
        if not (template and self.turn.trace_id):
            return ""
        return template.replace("{trace_id}", self.turn.trace_id)


@dataclass(frozen=True)
class Transcript:
    conversation: Conversation
    turns: list[TranscriptTurn]

    @property
    def step_total(self) -> int:
        return sum(item.turn.step_count for item in self.turns)

    @property
    def token_total(self) -> int:
        return sum(item.turn.total_tokens for item in self.turns)

    @property
    def tokens_counted(self) -> bool:
        """Whether a model that counts tokens answered any turn (the offline model counts none)."""
        return any(not item.turn.offline for item in self.turns)

    @property
    def duration_ms(self) -> float:
        return sum(item.turn.duration_ms for item in self.turns)

    @property
    def tool_call_count(self) -> int:
        return sum(item.tool_call_count for item in self.turns)


def _steps(turn: Turn, calls: list[TranscriptCall]) -> list[TranscriptStep]:
    by_step: dict[int, list[TranscriptCall]] = {}
    for call in calls:
        by_step.setdefault(call.step, []).append(call)
    # A step is one model call; the last usually has no tools because it wrote the answer.
    last = max([turn.step_count, *by_step])
    return [TranscriptStep(number, by_step.get(number, [])) for number in range(1, last + 1)]


def conversation_transcript(*, conversation_id: UUID) -> Transcript | None:
    """Return a conversation with its turns and tool calls in order, in three queries."""
    conversation = Conversation.objects.filter(pk=conversation_id).first()
    if conversation is None:
        return None
    turns = list(Turn.objects.filter(conversation=conversation).order_by("index", "started_at"))
    calls: dict[UUID, list[TranscriptCall]] = {}
    rows = ToolCall.objects.filter(turn__conversation=conversation).order_by("step", "id")
    for row in rows:
        fields = {name: getattr(row, name) for name in _CALL_FIELDS}
        calls.setdefault(row.turn_id, []).append(TranscriptCall(**fields))
    calls = _named(calls)
    html = turn_answers_html(answers=[turn.answer for turn in turns])
    items = [
        TranscriptTurn(turn, _steps(turn, calls.get(turn.pk, [])), answer_html)
        for turn, answer_html in zip(turns, html, strict=True)
    ]
    return Transcript(conversation=conversation, turns=items)


_TURN_FIELDS = (
    "index", "user_message", "answer", "status", "step_count", "model", "offline",
    "input_tokens", "output_tokens", "estimated_tokens", "time_to_first_token_ms", "duration_ms",
    "error_code", "error", "citations", "listed_articles", "answered", "small_talk",
    "index_incomplete",
    "vote",
    "feedback_comment", "feedback_at", "page", "started_at", "trace_id",
)  # fmt: skip
_CALL_FIELDS = (
    "step", "call_id", "name", "arguments", "result", "ok", "error", "executed",
    "started_at", "duration_ms",
)  # fmt: skip


def _detail_article(call: TranscriptCall) -> tuple[int | None, str]:
    """A get_article_detail call's article id, and its title as the call returned it."""
    if call.name != get_article_detail.name or not isinstance(call.arguments, dict):
        return None, ""
    article_id = call.arguments.get("article_id")
    result = call.result if isinstance(call.result, dict) else {}
    title = result.get("title") if call.ok else ""
    return (article_id if isinstance(article_id, int) else None), str(title or "")


def _named(calls: dict[UUID, list[TranscriptCall]]) -> dict[UUID, list[TranscriptCall]]:
    """Each get_article_detail call with its article's title: `{"article_id": 3}` told a
    reviewer nothing. What the call returned, else (it failed) the article as it stands,
    looked up in one query only when some call needs it."""
    wanted = {
        article_id
        for group in calls.values()
        for call in group
        if (found := _detail_article(call))[0] is not None and not found[1]
        for article_id in [found[0]]
    }
    titles = (
        dict(Article.objects.filter(pk__in=wanted).values_list("pk", "title")) if wanted else {}
    )

    def named(call: TranscriptCall) -> TranscriptCall:
        article_id, title = _detail_article(call)
        title = title or titles.get(article_id, "")
        return replace(call, article_title=title) if title else call

    return {turn: [named(call) for call in group] for turn, group in calls.items()}


def conversation_export(*, conversation_id: UUID) -> dict | None:
    """Return the transcript as JSON-ready data (datetimes and UUIDs left to the encoder)."""
    transcript = conversation_transcript(conversation_id=conversation_id)
    if transcript is None:
        return None
    conversation = transcript.conversation
    turns = []
    for item in transcript.turns:
        data = {"id": item.turn.pk, **{name: getattr(item.turn, name) for name in _TURN_FIELDS}}
        data["tool_calls"] = [
            {name: getattr(call, name) for name in _CALL_FIELDS}
            for step in item.steps
            for call in step.tool_calls
        ]
        turns.append(data)
    return {
        "conversation": {
            "id": conversation.pk,
            "page": conversation.page,
            "created_at": conversation.created_at,
            "updated_at": conversation.updated_at,
            "turn_count": len(turns),
            "step_total": transcript.step_total,
            "token_total": transcript.token_total,
        },
        "turns": turns,
    }
