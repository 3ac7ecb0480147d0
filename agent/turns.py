"""Preparing a chat turn: the visitor's message, their conversation, its history and the page.

The runner (`agent/runner.py`) orchestrates a turn; everything it needs to know before the loop
starts, and how a finished turn becomes a record, lives here so the runner stays small.
"""

import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import transaction

from agent import events, selectors, services
from agent.checkpoints import turn_start
from agent.exceptions import BadRequest, ConversationFull
from agent.frames import FrameError, conversation_id_parse, text_check, text_scrub
from agent.llm.base import ChatModel
from agent.loop import ToolRecord, TurnResult
from agent.ratelimit import TurnBudget
from agent.text import has_visible_text

CONVERSATION_UNKNOWN = "That conversation does not exist here. Start a new chat."


@dataclass(frozen=True)
class ChatMessage:
    content: str
    conversation_id: uuid.UUID | None = None
    page: str = ""


@dataclass(frozen=True)
class Visitor:
    session_key: str  # the session key's digest (config.sessions.session_digest), never the cookie
    client_ip: str
    language: str = ""  # the language the pages are shown in ("zh-hans"): answers follow it


@dataclass
class Prepared:
    conversation_id: str
    index: int
    page: dict | None
    history: list[dict]
    turn_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    budget: TurnBudget | None = None  # the tokens held for the turn (agent/ratelimit.py)


@dataclass
class TurnContext:
    """What a running turn needs to be recorded, however it ends."""

    message: ChatMessage
    visitor: Visitor
    prepared: Prepared
    model: ChatModel
    trace_id: str = ""  # the turn's OpenTelemetry trace, when tracing is on
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    started: float = field(default_factory=time.monotonic)

    def record(self, result: TurnResult) -> services.TurnRecord:
        first_token = result.first_token_at
        return services.TurnRecord(
            turn_id=self.prepared.turn_id,
            trace_id=self.trace_id,
            conversation_id=self.prepared.conversation_id,
            session_key=self.visitor.session_key,
            index=self.prepared.index,
            user_message=self.message.content,
            status=result.status,
            started_at=self.started_at.isoformat(),
            page=self.message.page,
            answer=storable(result.answer),
            step_count=result.steps,
            model=self.model.name,
            offline=self.model.offline,
            input_tokens=result.billed.input_tokens,
            output_tokens=result.billed.output_tokens,
            estimated_tokens=result.estimated.total,
            time_to_first_token_ms=(first_token - self.started) * 1000 if first_token else None,
            duration_ms=(time.monotonic() - self.started) * 1000,
            error_code=result.error_code,
            error=storable(result.error),
            citations=storable(result.citations),
            listed_articles=storable(_listed(result)),
            answered=result.answered,
            tool_calls=storable([_tool_call_out(call) for call in result.tool_calls]),
        )


def message_parse(frame: Any) -> ChatMessage:
    """Validate a `{"type": "message", ...}` frame.

    Raises:
        BadRequest: empty or over-long content, a malformed conversation id or page.
    """
    try:
        text_check(frame)  # NUL or a lone surrogate anywhere could never be saved
    except FrameError as exc:
        raise BadRequest(str(exc)) from None
    content = frame.get("content", "")
    if not isinstance(content, str) and content is not None:
        # As SSE's schema says it: a number or a list is no empty message, and "empty" sent
        # a client looking for a missing question.
        raise BadRequest("The message must be text.")
    if not content or not has_visible_text(content):
        raise BadRequest("The message is empty. Type a question first.")
    limit = settings.AGENT_MAX_MESSAGE_CHARS
    if len(content) > limit:
        raise BadRequest(
            f"The message is {len(content):,} characters long; the limit is {limit:,}."
        )
    try:
        conversation_id = conversation_id_parse(frame.get("conversation_id"))
    except FrameError as exc:
        raise BadRequest(str(exc)) from None
    page = frame.get("page") or ""
    if not isinstance(page, str) or len(page) > 200:
        raise BadRequest("page must be an article slug.")
    return ChatMessage(content=content.strip(), conversation_id=conversation_id, page=page)


def message_check_new_session(*, message: ChatMessage, session_key: str) -> None:
    """Refuse, before a new session's row is written, a message whose turn could not start:
    an unknown page, or a conversation the session does not hold (a key not minted yet holds
    none). Refused only in `turn_prepare`, each such message from a client without a cookie
    wrote a `django_session` row, kept for two weeks.

    Args:
        message: the parsed message.
        session_key: the digest of the cookie's key, or "" for a session not created yet.

    Raises:
        BadRequest: with the words `turn_prepare` would use.
    """
    if message.page:
        _page(message.page)
    if message.conversation_id and not (
        session_key
        and selectors.conversation_get_owned(
            conversation_id=message.conversation_id, session_key=session_key
        )
    ):
        raise BadRequest(CONVERSATION_UNKNOWN)


def new_session_check(message: ChatMessage) -> Callable[[str], Awaitable[None]]:
    """`message_check_new_session` for `session_ensure(before_write=...)`."""

    async def check(session_key: str) -> None:
        if message.page or message.conversation_id:  # else nothing to look up
            await database_sync_to_async(message_check_new_session)(
                message=message, session_key=session_key
            )

    return check


def turn_prepare(*, message: ChatMessage, visitor: Visitor, turn_id: str = "") -> Prepared:
    """The visitor's conversation (created when new), the next turn number, history and page;
    the turn is recorded as `running` with its question (as `turn_id`, when given) before the
    model is called.

    Raises:
        BadRequest: an unknown page, or a conversation that is not the visitor's.
        ConversationFull: the conversation holds AGENT_TURNS_PER_CONVERSATION turns.
    """
    page = _page(message.page) if message.page else None
    turn_id = turn_id or str(uuid.uuid4())
    if not message.conversation_id:
        return _first_turn(message, visitor, page, turn_id)
    conversation = selectors.conversation_get_owned(
        conversation_id=message.conversation_id, session_key=visitor.session_key
    )
    if conversation is None:
        raise BadRequest(CONVERSATION_UNKNOWN)
    if conversation.turns_started >= settings.AGENT_TURNS_PER_CONVERSATION:
        raise ConversationFull(
            "This conversation has reached its length limit. Start a new chat to go on."
        )
    history = selectors.conversation_history(
        conversation=conversation, budget_chars=settings.AGENT_HISTORY_CHARS
    )
    # Together: a claimed turn number always has its row, whatever fails in between.
    with transaction.atomic():
        prepared = Prepared(
            conversation_id=str(conversation.pk),
            index=services.turn_index_claim(conversation=conversation),
            page=page,
            history=history,
            turn_id=turn_id,
        )
        turn_start(
            turn_id=prepared.turn_id,
            conversation=conversation,
            index=prepared.index,
            user_message=message.content,
            page=message.page,
        )
    return prepared


def _first_turn(
    message: ChatMessage, visitor: Visitor, page: dict | None, turn_id: str
) -> Prepared:
    """A new conversation with its first turn claimed and recorded: nothing to read (it has no
    history), three statements in one transaction instead of six round trips."""
    with transaction.atomic():
        conversation = services.conversation_start(
            conversation_id=None, session_key=visitor.session_key, page=message.page, turns=1
        )
        prepared = Prepared(
            conversation_id=str(conversation.pk), index=1, page=page, history=[], turn_id=turn_id
        )
        turn_start(
            turn_id=prepared.turn_id,
            conversation=conversation,
            index=1,
            user_message=message.content,
            page=message.page,
        )
    return prepared


def _page(slug: str) -> dict:
    from blog.models import Article

    article = Article.objects.published().filter(slug=slug).only("pk", "title", "slug").first()
    if article is None:
        # Not echoed back: the slug is whatever the client sent (up to 200 characters).
        raise BadRequest("The page is not a published article.")
    return {"article_id": article.pk, "title": article.title, "url": article.get_absolute_url()}


def storable(value: Any) -> Any:
    """The value with NUL and lone surrogates replaced: PostgreSQL and UTF-8 cannot hold them."""
    return text_scrub(value)


def _listed(result: TurnResult) -> list[dict]:
    """The articles the turn's `error` showed the visitor (a step-limit ending lists them)."""
    return list(result.articles) if result.error_code in events.LISTS_ARTICLES else []


def _tool_call_out(call: ToolRecord) -> dict:
    # The model chooses names and ids; cut them to the columns' width so the turn still saves.
    return {
        "step": call.step,
        "call_id": call.call_id[:100],
        "name": call.name[:100],
        "arguments": call.arguments
        if isinstance(call.arguments, dict)
        else {"_raw": call.arguments},
        "result": call.result,
        "ok": call.ok,
        "error": call.error,
        "executed": call.executed,
        "started_at": call.started_at.isoformat(),
        "duration_ms": call.duration_ms,
    }
