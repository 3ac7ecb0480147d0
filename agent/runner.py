"""One chat turn, the same for WebSocket and SSE: check, prepare, run the loop, save after.

Preparing the turn and building its record live in `agent/turns.py`; this module orchestrates.
"""

import asyncio
import logging
import uuid
import weakref
from collections.abc import Awaitable, Callable

from channels.db import aclose_old_connections, database_sync_to_async
from django.conf import settings
from django.db import DatabaseError

from agent import events, ratelimit
from agent.checkpoints import WORKER_NAME, Checkpointer
from agent.exceptions import ConversationFull, SharedStateDown
from agent.holds import HoldSettlement
from agent.leases import TurnLease
from agent.llm.base import ChatModel
from agent.llm.offline import OfflineModel
from agent.llm.openai_compat import OpenAICompatModel
from agent.loop import Limits, TurnResult, VisitorGone, run_turn
from agent.prompts import build_messages
from agent.saving import TurnSaver
from agent.shared import Acquired
from agent.suggestions import decline_suggestions
from agent.tools import TOOLS
from agent.tools._visitor import visitor_address
from agent.turns import (  # noqa: F401  (re-exported: the transports import them from here)
    BadRequest,
    ChatMessage,
    Prepared,
    TurnContext,
    Visitor,
    message_parse,
    turn_prepare,
)
from ops import metrics
from ops.observer import TurnObservation

logger = logging.getLogger(__name__)
READ_PAUSE_MAX = 0.1  # seconds; see model()

Emit = Callable[[dict], Awaitable[None]]


class TurnRunner:
    """Runs turns for one process and knows which are in flight, for a clean shutdown."""

    def __init__(self) -> None:
        self.saver = TurnSaver()
        self.checkpoints = Checkpointer()
        self.closing = False
        self._active: set[asyncio.Task] = set()
        self._followups: set[asyncio.Task] = set()
        # Settlements Redis missed, tried again until it answers; shutdown does not wait for
        # them (the hold record stays, and recovery settles it to its last checkpoint).
        self._settling: set[asyncio.Task] = set()
        self._models: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    async def run(self, *, message: ChatMessage, visitor: Visitor, emit: Emit) -> None:
        """Run one turn and emit its events; ends with exactly one `done` or `error`.

        Raises:
            asyncio.CancelledError: after the partial turn is handed to the saver.
        """
        # Tracked from the first line, not from `start`: a turn still waiting for its lease or
        # the database when the drain begins must end with `unavailable` too, not a cut.
        task = asyncio.current_task()
        self._active.add(task)
        try:
            await self._run(message, visitor, emit)
        except VisitorGone:
            return  # nobody is left to tell; the turn was saved as cancelled
        except asyncio.CancelledError:
            if self.closing:  # the drain ran out: tell the visitor to ask again elsewhere
                await _emit_quietly(emit, _unavailable())
            raise
        except SharedStateDown as exc:
            # Before the turn started (its limits, lease or budget could not be counted):
            # nothing to save, and the question is the visitor's to send again.
            metrics.turn_refused_count(reason="shared_state")
            await emit(events.error_from(exc))
        except Exception as exc:
            # A failure outside the loop (the cache, a bug): the visitor still gets an ending.
            if _LOGGED not in getattr(exc, "__notes__", ()):  # else logged with the turn's ids
                logger.exception("chat turn failed outside the loop")
            await emit(events.error(events.INTERNAL, "Something went wrong. Please try again."))
        finally:
            self._active.discard(task)

    async def _run(self, message: ChatMessage, visitor: Visitor, emit: Emit) -> None:
        if self.closing:
            metrics.turn_refused_count(reason="draining")
            await emit(_unavailable())
            return
        conversation_id = str(message.conversation_id) if message.conversation_id else None
        if conversation_id:  # the previous turn's budget and save land first
            await self.saver.wait_for_conversation(conversation_id)
        # Limits before any database work: a refused message costs none.
        refusal = await ratelimit.message_allow(
            session_key=visitor.session_key, client_ip=visitor.client_ip, content=message.content
        )
        if refusal:
            metrics.refusal_count(reason=refusal.reason, address=visitor.client_ip)
            await emit(_rate_limited(refusal))
            return
        # One running turn per conversation, AGENT_TURNS_PER_SESSION per session,
        # AGENT_TURNS_PER_IP per address and AGENT_TURNS_PER_NETWORK per /48, on every worker.
        lease = TurnLease(
            conversation_id=conversation_id,
            session_key=visitor.session_key,
            client_ip=visitor.client_ip,
        )
        held = await lease.acquire()
        if held != Acquired.OK:
            # The address cap apart: an office behind one address reaching it is worth seeing.
            full = "address" if held in (Acquired.ADDRESS_FULL, Acquired.NETWORK_FULL) else "busy"
            metrics.turn_refused_count(reason=full)
            await emit(events.error(events.BUSY, _BUSY[held], reason=_BUSY_REASONS[held]))
            return
        try:
            prepared = await self._prepare(message, visitor, emit, conversation_id)
        except BaseException:
            await lease.release()
            raise
        if prepared is None:
            await lease.release()
            return
        # Metrics, the trace and the log fields of this turn (ops/observer.py).
        with TurnObservation(
            turn_id=prepared.turn_id, conversation_id=prepared.conversation_id, index=prepared.index
        ) as seen:
            # The turn's first line: a turn whose process is killed writes no other (its
            # summary line dies with it), and this one says when it began and which process
            # ran it, the pid supervisord's `exited:` line and the recovery's line name.
            logger.info("turn %d started on worker %s", prepared.index, WORKER_NAME)
            await self._run_turn(
                message, visitor, prepared, emit, lease, seen, attach=conversation_id is None
            )

    async def _prepare(
        self, message: ChatMessage, visitor: Visitor, emit: Emit, conversation_id: str | None
    ) -> Prepared | None:
        """The budget reserved and the turn prepared; None when refused (the visitor is told)."""
        # The turn's id first: its hold is recorded under it, for recovery to find.
        turn_id = str(uuid.uuid4())
        budget = await ratelimit.budget_reserve(
            conversation_id=conversation_id, client_ip=visitor.client_ip, turn_id=turn_id
        )
        if isinstance(budget, ratelimit.Refusal):
            metrics.refusal_count(reason=budget.reason, address=visitor.client_ip)
            await emit(_rate_limited(budget))
            return None
        prepared = None
        try:
            await aclose_old_connections()
            work = asyncio.ensure_future(
                database_sync_to_async(turn_prepare)(
                    message=message, visitor=visitor, turn_id=turn_id
                )
            )
            try:
                prepared = await asyncio.shield(work)
            except asyncio.CancelledError:
                self._cancel_when_prepared(work, message, visitor)
                raise
            prepared.budget = budget
            return prepared
        except BadRequest as exc:
            await emit(events.error_from(exc))
        except ConversationFull as exc:
            metrics.refusal_count(reason="conversation_turns")
            await emit(events.error_from(exc))
        except DatabaseError:
            logger.exception("database unavailable at turn start")
            metrics.turn_refused_count(reason="database")
            await emit(events.database_unavailable())
        finally:
            # Refused, failed, or cancelled meanwhile (a socket closed right after its message):
            # nothing was spent, so the hold goes back. A cancelled one used to keep it for the
            # day, on the address's budget and the site's.
            if prepared is None:
                await ratelimit.budget_settle(budget=budget, conversation_id="", tokens=0)
        return None

    def _cancel_when_prepared(
        self, work: asyncio.Future, message: ChatMessage, visitor: Visitor
    ) -> None:
        """Save the turn `work` is writing as `cancelled`, once the thread has written it.

        A thread cannot be stopped: cancelled while it wrote the turn's row (a socket closed
        right after its message), the turn ended at once and the row, written a moment later,
        stayed `running` until recovery. The visitor's close does not wait for the thread.
        """

        async def finish() -> None:
            try:
                prepared = await work
            except Exception:  # noqa: BLE001 - refused or failed: no row was written
                return
            turn = TurnContext(message, visitor, prepared, self.model())
            self.saver.schedule(turn.record(self._ended_early()))

        task = asyncio.create_task(finish(), name="cancel-prepared-turn")
        self._followups.add(task)  # a reference, or the task may be collected mid-wait
        task.add_done_callback(self._followups.discard)

    def _ended_early(self) -> TurnResult:
        """A turn cancelled before its loop: the drain's cut is `interrupted`, as in `_run_turn`
        (the visitor was told `unavailable`), a visitor's close is `cancelled`."""
        if self.closing:
            return TurnResult(status="interrupted", error_code=events.UNAVAILABLE)
        return TurnResult(status="cancelled")

    async def _run_turn(
        self,
        message: ChatMessage,
        visitor: Visitor,
        prepared: Prepared,
        emit: Emit,
        lease: TurnLease,
        seen: TurnObservation,
        *,
        attach: bool,
    ) -> None:
        model = self.model()
        turn = TurnContext(message, visitor, prepared, model, trace_id=seen.trace_id)
        holder: list[TurnResult] = []

        def started(result: TurnResult) -> None:
            holder.append(result)
            self.checkpoints.track(
                prepared.turn_id, result, trace_id=seen.trace_id, root_span_id=seen.span_id
            )

        try:
            # Inside the `try`: a Stop or a closed socket here (the turn has its row and its
            # hold) left the hold spent for the day and the lock renewed for ever.
            if attach:
                await lease.attach(prepared.conversation_id)
                if prepared.budget:
                    await ratelimit.budget_attach(
                        budget=prepared.budget, conversation_id=prepared.conversation_id
                    )
            visitor_address.set(visitor.client_ip)  # the model's searches count on it
            await emit(events.start(prepared.conversation_id, prepared.index, model.offline))
            result = await run_turn(
                messages=build_messages(
                    history=prepared.history,
                    user_message=message.content,
                    page=prepared.page,
                    language=visitor.language,
                ),
                model=model,
                tools=TOOLS,
                limits=limits_from_settings(),
                emit=emit,
                conversation_id=prepared.conversation_id,
                budget=prepared.budget.grant if prepared.budget else None,
                on_result=started,
                hooks=seen.hooks(model=model, tool_names=[tool.name for tool in TOOLS]),
                suggest=decline_suggestions,
            )
        except BaseException as exc:
            # Stop, a closed tab, shutdown, or a transport that failed mid-turn: keep what was
            # produced, with a truthful status, and charge what was spent.
            result = holder[0] if holder else TurnResult()  # ended before the loop began
            # VisitorGone is a CancelledError: leaving is `cancelled` whichever came first.
            if isinstance(exc, asyncio.CancelledError):
                result.status = "interrupted" if self.closing else "cancelled"
                if self.closing:  # `run` sends the `unavailable` event
                    result.error_code = events.UNAVAILABLE
            else:
                result.status, result.error_code = "error", events.INTERNAL
                result.error = result.error or f"{type(exc).__name__}: {exc}"
            self._after(turn, result, lease, seen)
            if isinstance(exc, Exception):
                # Here, inside the turn's log fields: `run` logged the traceback after they
                # were gone, a line no turn id led to.
                logger.exception("chat turn failed outside the loop")
                exc.add_note(_LOGGED)  # the same exception goes on: its callers catch it by type
            raise
        finally:
            self.checkpoints.forget(prepared.turn_id)
        self._after(turn, result, lease, seen)

    def _after(
        self, turn: "TurnContext", result: TurnResult, lease: TurnLease, seen: TurnObservation
    ) -> None:
        """After the final event: the budget and the save never delay the visitor.

        The conversation stays held ("saving") until the save lands, so the next turn and the
        transcript wait for it on every worker; the session's slot is free at once.
        """
        try:
            task = self._save(turn, result, lease, seen)
        except BaseException:
            # A record that cannot be built or scheduled saves nothing: the hold goes now, or
            # its heartbeat renews the conversation (every later message "busy") for as long
            # as the process lives.
            asyncio.ensure_future(lease.release())
            raise
        task.add_done_callback(lambda _task: asyncio.ensure_future(lease.release()))

    def _save(
        self, turn: "TurnContext", result: TurnResult, lease: TurnLease, seen: TurnObservation
    ) -> asyncio.Task:
        """Settle the budget, report the turn, and schedule its record's save."""
        budget = turn.prepared.budget
        spent = (
            ratelimit.budget_settlement(
                budget=budget,
                conversation_id=turn.prepared.conversation_id,
                tokens=result.usage.total,
            )
            if budget
            else None
        )
        record = turn.record(result)
        seen.finish(
            status=record.status,
            first_token_ms=record.time_to_first_token_ms,
            duration_ms=record.duration_ms,
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
            error_code=record.error_code,
            answered=record.answered,
            steps=record.step_count,
            error=record.error,
        )
        return self.saver.schedule(record, first=self._finish(lease, spent))

    async def _finish(self, lease: TurnLease, spent: HoldSettlement | None) -> None:
        """The lease moved to saving and the budgets settled; when Redis is away, the
        settlement is tried again in the background until it answers (the saver goes on, and
        the lease's release, after the save, waits for Redis by itself)."""
        try:
            await lease.saving(spent)
        except SharedStateDown:
            if spent is not None:
                task = asyncio.create_task(ratelimit.budget_settle_again(spent))
                self._settling.add(task)  # a reference, or the task may be collected
                task.add_done_callback(self._settling.discard)
            raise

    def model(self) -> ChatModel:
        """The configured model; the OpenAI client is kept per event loop (it pools connections)."""
        if offline_mode():
            return OfflineModel()
        loop = asyncio.get_running_loop()
        # The socket rests for a text frame's interval after each text block, at most
        # READ_PAUSE_MAX: a longer interval holds only text, not a tool call or `done` behind it.
        read_pause = min(settings.AGENT_TEXT_FRAME_MS / 1000, READ_PAUSE_MAX)
        key = (
            settings.OPENAI_BASE_URL,
            settings.OPENAI_API_KEY,
            settings.AGENT_MODEL,
            read_pause,
            settings.AGENT_MAX_COMPLETION_TOKENS,
        )
        cached = self._models.get(loop)
        if cached is None or cached[0] != key:
            if cached is not None:  # settings changed: the old client's session closes now
                self._model_close_later(cached[1])
            cached = (
                key,
                OpenAICompatModel(
                    base_url=settings.OPENAI_BASE_URL or None,
                    api_key=settings.OPENAI_API_KEY or None,
                    model=settings.AGENT_MODEL,
                    timeout=settings.AGENT_MODEL_TIMEOUT,
                    call_seconds=settings.AGENT_MODEL_CALL_SECONDS,
                    max_retries=settings.AGENT_MODEL_MAX_RETRIES,
                    http=settings.AGENT_MODEL_HTTP,
                    read_pause=read_pause,
                    max_output_tokens=settings.AGENT_MAX_COMPLETION_TOKENS or None,
                ),
            )
            self._models[loop] = cached
        return cached[1]

    async def shutdown(self, drain: float = 10.0, timeout: float = 20.0) -> None:
        """Refuse new turns, give running ones `drain` seconds, end the rest with `unavailable`
        (saved as interrupted), then wait for the saves."""
        self.closing = True
        metrics.DRAINING.set(1)
        running = [task for task in self._active if not task.done()]
        if running:
            logger.warning("shutting down: %d running turns get %.1f s", len(running), drain)
        if running and drain > 0:
            await asyncio.wait(running, timeout=drain)
        running = [task for task in running if not task.done()]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=timeout)
        # A turn cut while its row was being written saves it once the thread is done: the
        # saver has nothing to drain until then, and the row stayed `running` past the exit.
        if self._followups:
            await asyncio.wait(set(self._followups), timeout=timeout)
        await self.saver.drain(timeout=timeout)
        await self.models_close()

    async def models_close(self) -> None:
        """Close this loop's model client: its aiohttp session, left to the garbage collector,
        logged `ERROR asyncio: Unclosed client session` at exit."""
        cached = self._models.pop(asyncio.get_running_loop(), None)
        if cached is not None:
            await cached[1].aclose()

    def _model_close_later(self, model: OpenAICompatModel) -> None:
        """Close a replaced model client once its running turns are done with it."""
        task = asyncio.create_task(self._model_close_idle(model), name="model-close")
        self._followups.add(task)  # a reference, or the task may be collected
        task.add_done_callback(self._followups.discard)

    async def _model_close_idle(self, model: OpenAICompatModel) -> None:
        running = [task for task in self._active if not task.done()]
        if running:
            await asyncio.wait(running)
        await model.aclose()


# A turn's failure outside the loop, logged already with the turn's ids (an exception's note).
_LOGGED = "docent: logged with the turn's ids"


_NETWORK_BUSY = "Too many answers are running at once from your network. Wait for one to finish."
_BUSY = {
    Acquired.BUSY: "This conversation is answering in another tab. Wait, or press Stop there.",
    Acquired.SAVING: "The previous answer is still being saved. Ask again in a moment.",
    Acquired.SESSION_FULL: "Too many answers are running at once. Wait for one to finish.",
    Acquired.ADDRESS_FULL: _NETWORK_BUSY,
    Acquired.NETWORK_FULL: _NETWORK_BUSY,  # its IPv6 /48's turns, all its /64s together
}
# What `busy` waits for, so the panel can say it in the reader's language: its own text read
# "another answer of this chat" to an office whose shared address had too many running.
_BUSY_REASONS = {
    Acquired.BUSY: "conversation",
    Acquired.SAVING: "conversation",
    Acquired.SESSION_FULL: "session",
    Acquired.ADDRESS_FULL: "network",
    Acquired.NETWORK_FULL: "network",
}


def _rate_limited(refusal: ratelimit.Refusal) -> dict:
    # A day's budget is named, as when it cuts a turn mid-answer (agent.loop), and a day's
    # messages: "asking faster than I can answer" is untrue of them.
    day = {"reason": refusal.reason} if refusal.reason in ratelimit.NAMED_REFUSALS else {}
    return events.error(
        events.RATE_LIMITED, refusal.message, retry_after=refusal.retry_after, **day
    )


def _unavailable() -> dict:
    return events.error(
        events.UNAVAILABLE, "This server is restarting. Reconnecting; then ask again."
    )


async def _emit_quietly(emit: Emit, event: dict) -> None:
    try:
        await emit(event)
    except Exception:  # noqa: BLE001 - the connection may already be gone; the save goes on
        logger.info("could not send the final event of an interrupted turn")


def offline_mode() -> bool:
    """No model endpoint configured: the built-in extractive model answers."""
    return not (settings.OPENAI_BASE_URL or settings.OPENAI_API_KEY)


def limits_from_settings() -> Limits:
    return Limits(
        max_steps=settings.AGENT_MAX_STEPS,
        tool_timeout=settings.AGENT_TOOL_TIMEOUT,
        tool_concurrency=settings.AGENT_TOOL_CONCURRENCY,
        on_max_steps=settings.AGENT_ON_MAX_STEPS,
        output_tokens=settings.AGENT_TOKENS_PER_ANSWER,
        max_tool_calls=settings.AGENT_MAX_TOOL_CALLS,
    )


runner = TurnRunner()
