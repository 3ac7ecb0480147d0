"""One chat turn, the same for WebSocket and SSE: check, run the loop, save in the background."""

import asyncio
import logging
import time
import uuid
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from channels.db import aclose_old_connections, database_sync_to_async
from django.conf import settings
from django.db import DatabaseError

from agent import events, ratelimit, selectors, services
from agent.frames import FrameError, text_check, text_scrub
from agent.leases import TurnLease
from agent.llm import ChatModel, OfflineModel, OpenAICompatModel
from agent.loop import Limits, ToolRecord, TurnResult, run_turn
from agent.prompts import build_messages
from agent.saving import TurnSaver
from agent.shared import Acquired
from agent.tools import TOOLS
from agent.tools.search_knowledge_base import NO_RESULTS

logger = logging.getLogger(__name__)

Emit = Callable[[dict], Awaitable[None]]


class BadRequest(Exception):
    """The visitor's message cannot be taken; the text says why."""


@dataclass(frozen=True)
class ChatMessage:
    content: str
    conversation_id: uuid.UUID | None = None
    page: str = ""


@dataclass(frozen=True)
class Visitor:
    session_key: str
    client_ip: str


@dataclass
class Prepared:
    conversation_id: str
    index: int
    page: dict | None
    history: list[dict]


@dataclass
class TurnContext:
    """What a running turn needs to be recorded, however it ends."""

    message: ChatMessage
    visitor: Visitor
    prepared: Prepared
    model: ChatModel
    lease: "TurnLease"
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    started: float = field(default_factory=time.monotonic)

    def record(self, result: TurnResult) -> services.TurnRecord:
        first_token = result.first_token_at
        return services.TurnRecord(
            turn_id=str(uuid.uuid4()),
            conversation_id=self.prepared.conversation_id,
            session_key=self.visitor.session_key,
            index=self.prepared.index,
            user_message=self.message.content,
            status=result.status,
            started_at=self.started_at.isoformat(),
            page=self.message.page,
            answer=_storable(result.answer),
            step_count=result.steps,
            model=self.model.name,
            offline=self.model.offline,
            input_tokens=result.usage.input_tokens,
            output_tokens=result.usage.output_tokens,
            time_to_first_token_ms=(first_token - self.started) * 1000 if first_token else None,
            duration_ms=(time.monotonic() - self.started) * 1000,
            error_code=result.error_code,
            error=_storable(result.error),
            citations=_storable(result.citations),
            no_answer=_no_answer(result),
            tool_calls=_storable([_tool_call_out(call) for call in result.tool_calls]),
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
    content = frame.get("content")
    if not isinstance(content, str) or not content.strip():
        raise BadRequest("The message is empty. Type a question first.")
    limit = settings.AGENT_MAX_MESSAGE_CHARS
    if len(content) > limit:
        raise BadRequest(
            f"The message is {len(content):,} characters long; the limit is {limit:,}."
        )
    conversation_id = frame.get("conversation_id") or None
    if conversation_id is not None:
        try:
            conversation_id = uuid.UUID(str(conversation_id))
        except ValueError:
            raise BadRequest("conversation_id is not a valid id. Start a new chat.") from None
    page = frame.get("page") or ""
    if not isinstance(page, str) or len(page) > 200 or "\x00" in page:
        raise BadRequest("page must be an article slug.")
    if "\x00" in content:
        # PostgreSQL cannot store NUL; refusing it here keeps the turn savable.
        raise BadRequest("The message contains a NUL character (\\u0000); remove it and resend.")
    return ChatMessage(content=content.strip(), conversation_id=conversation_id, page=page)


class TurnRunner:
    """Runs turns for one process and knows which are in flight, for a clean shutdown."""

    def __init__(self) -> None:
        self.saver = TurnSaver()
        self.closing = False
        self._active: set[asyncio.Task] = set()
        self._models: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    async def run(self, *, message: ChatMessage, visitor: Visitor, emit: Emit) -> None:
        """Run one turn and emit its events; ends with exactly one `done` or `error`.

        Raises:
            asyncio.CancelledError: after the partial turn is handed to the saver.
        """
        try:
            await self._run(message, visitor, emit)
        except Exception:
            # A failure outside the loop (the cache, a bug): the visitor still gets an ending.
            logger.exception("chat turn failed outside the loop")
            await emit(events.error(events.INTERNAL, "Something went wrong. Please try again."))

    async def _run(self, message: ChatMessage, visitor: Visitor, emit: Emit) -> None:
        if self.closing:
            await emit(
                events.error(events.INTERNAL, "The server is restarting. Ask again shortly.")
            )
            return
        conversation_id = str(message.conversation_id) if message.conversation_id else None
        if conversation_id:  # the previous turn's budget and save land first
            await self.saver.wait_for_conversation(conversation_id)
        # Limits before any database work: a refused message costs none.
        refusal = await ratelimit.message_allow(
            session_key=visitor.session_key, client_ip=visitor.client_ip
        )
        if refusal:
            await emit(_rate_limited(refusal))
            return
        lease = TurnLease(conversation_id=conversation_id, session_key=visitor.session_key)
        held = await lease.acquire()
        if held != Acquired.OK:
            await emit(events.error(events.BUSY, _BUSY[held]))
            return
        try:
            refusal = await ratelimit.budget_reserve(
                conversation_id=conversation_id, client_ip=visitor.client_ip
            )
            if refusal:
                await emit(_rate_limited(refusal))
                await lease.release()
                return
            prepared = await self._prepare(message, visitor, emit)
        except BaseException:
            await lease.release()
            raise
        if prepared is None:
            await self._refund(conversation_id, visitor)
            await lease.release()
            return
        if conversation_id is None:
            await lease.attach(prepared.conversation_id)
        await self._run_turn(message, visitor, prepared, emit, lease)

    async def _prepare(
        self, message: ChatMessage, visitor: Visitor, emit: Emit
    ) -> "Prepared | None":
        await aclose_old_connections()
        try:
            return await database_sync_to_async(_prepare)(message, visitor)
        except BadRequest as exc:
            await emit(events.error(events.BAD_REQUEST, str(exc)))
        except DatabaseError:
            logger.exception("database unavailable at turn start")
            await emit(
                events.error(
                    events.INTERNAL,
                    "The assistant cannot reach its database right now. Please try again.",
                )
            )
        return None

    async def _refund(self, conversation_id: str | None, visitor: Visitor) -> None:
        await ratelimit.budget_settle(
            conversation_id=conversation_id or "",
            reserved_for=conversation_id,
            client_ip=visitor.client_ip,
            tokens=0,
        )

    async def _run_turn(
        self,
        message: ChatMessage,
        visitor: Visitor,
        prepared: Prepared,
        emit: Emit,
        lease: TurnLease,
    ) -> None:
        model = self.model()
        await emit(
            events.start(prepared.conversation_id, prepared.index, model.name, model.offline)
        )
        turn = TurnContext(message, visitor, prepared, model, lease)
        holder: list[TurnResult] = []
        task = asyncio.current_task()
        self._active.add(task)
        try:
            result = await run_turn(
                messages=build_messages(
                    history=prepared.history, user_message=message.content, page=prepared.page
                ),
                model=model,
                tools=TOOLS,
                limits=limits_from_settings(),
                emit=emit,
                conversation_id=prepared.conversation_id,
                on_result=holder.append,
            )
        except BaseException as exc:
            # Stop, a closed tab, shutdown, or a transport that failed mid-turn: keep what was
            # produced, with a truthful status, and charge what was spent.
            result = holder[0]
            if isinstance(exc, asyncio.CancelledError):
                result.status = "interrupted" if self.closing else "cancelled"
            else:
                result.status, result.error_code = "error", events.INTERNAL
                result.error = result.error or f"{type(exc).__name__}: {exc}"
            self._after(turn, result)
            raise
        finally:
            self._active.discard(task)
        self._after(turn, result)

    def _after(self, turn: "TurnContext", result: TurnResult) -> None:
        """After the final event: the budget and the save never delay the visitor.

        The conversation stays held ("saving") until the save lands, so the next turn and the
        transcript wait for it on every worker; the session's slot is free at once.
        """
        lease = turn.lease
        conversation_id = turn.prepared.conversation_id
        settle = ratelimit.budget_settle(
            conversation_id=conversation_id,
            reserved_for=str(turn.message.conversation_id)
            if turn.message.conversation_id
            else None,
            client_ip=turn.visitor.client_ip,
            tokens=result.usage.total,
        )
        task = self.saver.schedule(turn.record(result), first=_together(lease.saving(), settle))
        task.add_done_callback(lambda _task: asyncio.ensure_future(lease.release()))

    def model(self) -> ChatModel:
        """The configured model; the OpenAI client is kept per event loop (it pools connections)."""
        if offline_mode():
            return OfflineModel()
        loop = asyncio.get_running_loop()
        key = (settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY, settings.AGENT_MODEL)
        cached = self._models.get(loop)
        if cached is None or cached[0] != key:
            cached = (
                key,
                OpenAICompatModel(
                    base_url=settings.OPENAI_BASE_URL or None,
                    api_key=settings.OPENAI_API_KEY or None,
                    model=settings.AGENT_MODEL,
                    timeout=settings.AGENT_MODEL_TIMEOUT,
                    max_retries=settings.AGENT_MODEL_MAX_RETRIES,
                ),
            )
            self._models[loop] = cached
        return cached[1]

    async def shutdown(self, timeout: float = 20.0) -> None:
        """Stop taking turns, cancel the running ones (saved as interrupted), wait for saves."""
        self.closing = True
        running = [task for task in self._active if not task.done()]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=timeout)
        await self.saver.drain(timeout=timeout)


_BUSY = {
    Acquired.BUSY: "This conversation is answering in another tab. Wait, or press Stop there.",
    Acquired.SAVING: "The previous answer is still being saved. Ask again in a moment.",
    Acquired.SESSION_FULL: "Too many answers are running at once. Wait for one to finish.",
}


def _rate_limited(refusal: ratelimit.Refusal) -> dict:
    return events.error(events.RATE_LIMITED, refusal.message, retry_after=refusal.retry_after)


async def _together(*steps: Awaitable) -> None:
    await asyncio.gather(*steps)


def offline_mode() -> bool:
    """No model endpoint configured: the built-in extractive model answers."""
    return not (settings.OPENAI_BASE_URL or settings.OPENAI_API_KEY)


def limits_from_settings() -> Limits:
    return Limits(
        max_steps=settings.AGENT_MAX_STEPS,
        tool_timeout=settings.AGENT_TOOL_TIMEOUT,
        tool_concurrency=settings.AGENT_TOOL_CONCURRENCY,
        on_max_steps=settings.AGENT_ON_MAX_STEPS,
    )


def _prepare(message: ChatMessage, visitor: Visitor) -> Prepared:
    page = _page(message.page) if message.page else None
    if message.conversation_id:
        conversation = selectors.conversation_get_owned(
            conversation_id=message.conversation_id, session_key=visitor.session_key
        )
        if conversation is None:
            raise BadRequest("That conversation does not exist here. Start a new chat.")
    else:
        conversation = services.conversation_start(
            conversation_id=None, session_key=visitor.session_key, page=message.page
        )
    return Prepared(
        conversation_id=str(conversation.pk),
        index=services.turn_index_claim(conversation=conversation),
        page=page,
        history=selectors.conversation_history(
            conversation=conversation, budget_chars=settings.AGENT_HISTORY_CHARS
        ),
    )


def _page(slug: str) -> dict:
    from blog.models import Article

    article = Article.objects.published().filter(slug=slug).only("pk", "title", "slug").first()
    if article is None:
        raise BadRequest(f'There is no published article "{slug}".')
    return {"article_id": article.pk, "title": article.title, "url": article.get_absolute_url()}


def _no_answer(result: TurnResult) -> bool:
    """The assistant had nothing to answer with: editors should see this question."""
    if result.status != "done" or result.citations:
        return False
    searched_empty = any(
        c.name == "search_knowledge_base" and c.result == NO_RESULTS for c in result.tool_calls
    )
    return searched_empty or not result.articles


def _storable(value: Any) -> Any:
    """The value with NUL and lone surrogates replaced: PostgreSQL and UTF-8 cannot hold them."""
    return text_scrub(value)


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


runner = TurnRunner()
