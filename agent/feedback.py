"""Visitor feedback frames (WebSocket, SSE) and the REST call: parse, then save for the owner."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from agent import events, ratelimit, services
from agent.exceptions import BadRequest, SharedStateDown
from agent.frames import FrameError, conversation_id_parse
from agent.runner import runner
from ops.metrics import refusal_count

logger = logging.getLogger(__name__)

VOTES = {"up": "up", "down": "down", "none": ""}
# Votes being saved, for the event loop to keep: a socket may close before its vote is saved,
# and the vote stays saved (the visitor made it).
_SAVING: set[asyncio.Task] = set()


@dataclass(frozen=True)
class Feedback:
    conversation_id: uuid.UUID
    turn: int
    vote: str  # "up", "down", or "" to clear
    comment: str = ""


def feedback_parse(frame: dict[str, Any]) -> Feedback:
    """Validate a `{"type": "feedback", ...}` frame (or the REST body plus its path).

    Raises:
        BadRequest: a malformed id or turn, an unknown vote, an over-long comment.
    """
    try:  # a vote names its conversation: null is no more an id here than 0 is
        conversation_id = conversation_id_parse(frame.get("conversation_id"))
    except FrameError:
        conversation_id = None
    if conversation_id is None:
        raise BadRequest("conversation_id is not a valid id.")
    turn = frame.get("turn")
    if isinstance(turn, bool) or not isinstance(turn, int) or turn < 1:
        raise BadRequest("turn must be the answer’s turn number (1 or more).")
    vote = frame.get("vote")
    # A list or an object is unhashable: `in` raised, and the socket (with its running answer)
    # was closed as an internal error.
    if not isinstance(vote, str) or vote not in VOTES:
        raise BadRequest('vote must be "up", "down" or "none".')
    comment = frame.get("comment") or ""
    if not isinstance(comment, str) or "\x00" in comment:
        raise BadRequest("comment must be text.")
    limit = settings.AGENT_FEEDBACK_COMMENT_CHARS
    if len(comment) > limit:
        raise BadRequest(
            f"The comment is {len(comment):,} characters long; the limit is {limit:,}."
        )
    return Feedback(conversation_id, turn, VOTES[vote], comment.strip())


async def feedback_submit(*, frame: dict[str, Any], session_key: str, client_ip: str) -> dict:
    """Parse and save one feedback frame; return `feedback_saved` or an `error` event."""
    try:
        feedback = feedback_parse(frame)
        if not session_key:  # a visitor without a session has no answers: no query needed
            raise BadRequest(services.FEEDBACK_NOT_FOUND)
        # Each vote is a write: one socket could otherwise send them as fast as it can.
        refusal = await ratelimit.feedback_allow(session_key=session_key, client_ip=client_ip)
        if refusal:
            refusal_count(reason=refusal.reason, address=client_ip)
            return _refused(
                frame,
                events.error(events.RATE_LIMITED, refusal.message, retry_after=refusal.retry_after),
            )
        # The answer may still be saving in this process: let it land first.
        await runner.saver.wait_for_conversation(str(feedback.conversation_id))
        # Not on the process's one database thread: a save waiting for a row lock there held
        # every socket's frames (Channels closes old connections on it before each one).
        await database_sync_to_async(services.turn_feedback_set, thread_sensitive=False)(
            conversation_id=feedback.conversation_id,
            session_key=session_key,
            index=feedback.turn,
            vote=feedback.vote,
            comment=feedback.comment,
        )
    except (BadRequest, SharedStateDown) as exc:
        return _refused(frame, events.error_from(exc))
    return events.feedback_saved(feedback.turn)


def _refused(frame: dict[str, Any], error: dict) -> dict:
    """Mark an `error` as the answer to a vote: it may arrive while an answer streams on the
    same socket, and the panel must not take it for the end of that answer."""
    turn = frame.get("turn")
    return {**error, "feedback": True, **({"turn": turn} if type(turn) is int else {})}


class FeedbackQueue:
    """One socket's votes, each saved in a task beside the socket's frames, in the order sent.

    Awaited in the frame's handler, a vote held up every later frame of its socket for as long
    as its save waited (for the answer's own save, up to 5 s; for a row lock, without end): a
    Stop sent right after it stopped nothing until then, and the answer streamed on, charged.
    """

    def __init__(self, *, reply: Callable[[dict], Awaitable[None]], limit: int) -> None:
        self._reply = reply  # sends an event to the socket
        # Votes waiting: before, they waited as frames, under daphne's bound on those
        # (WEBSOCKET_QUEUED_FRAMES); that bound is theirs now.
        self._limit = limit
        self._waiting = 0
        self._order = asyncio.Lock()  # FIFO: the last vote sent is the one that stands

    async def put(self, *, frame: dict[str, Any], session_key: str, client_ip: str) -> None:
        """Save the vote in the background and answer it when saved; refuse it when too many
        of this socket's are still waiting."""
        if self._waiting >= self._limit:
            busy = events.error(events.BUSY, "Too many votes are waiting; try again shortly.")
            await self._reply(_refused(frame, busy))
            return
        self._waiting += 1
        task = asyncio.create_task(self._save(frame, session_key, client_ip))
        _SAVING.add(task)
        task.add_done_callback(_SAVING.discard)

    async def _save(self, frame: dict[str, Any], session_key: str, client_ip: str) -> None:
        try:
            async with self._order:
                event = await _submit_answered(frame, session_key, client_ip)
                await self._reply(event)  # inside the lock: answers go in the votes' order
        finally:
            self._waiting -= 1


async def _submit_answered(frame: dict[str, Any], session_key: str, client_ip: str) -> dict:
    """`feedback_submit`, with a failure answered too: in a task nobody awaits, it would be
    logged as "never retrieved" and the vote left without an answer."""
    try:
        return await feedback_submit(frame=frame, session_key=session_key, client_ip=client_ip)
    except Exception:
        logger.exception("a vote could not be saved")
        failed = events.error(events.INTERNAL, "Something went wrong. Please try again.")
        return _refused(frame, failed)
