"""Visitor feedback frames (WebSocket, SSE) and the REST call: parse, then save for the owner."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from agent import events, ratelimit, services
from agent.exceptions import BadRequest
from agent.frames import FrameError, conversation_id_parse
from agent.runner import runner
from ops.metrics import refusal_count

VOTES = {"up": "up", "down": "down", "none": ""}


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
            refusal_count(reason=refusal.reason)
            return _refused(
                frame,
                events.error(events.RATE_LIMITED, refusal.message, retry_after=refusal.retry_after),
            )
        # The answer may still be saving in this process: let it land first.
        await runner.saver.wait_for_conversation(str(feedback.conversation_id))
        await database_sync_to_async(services.turn_feedback_set)(
            conversation_id=feedback.conversation_id,
            session_key=session_key,
            index=feedback.turn,
            vote=feedback.vote,
            comment=feedback.comment,
        )
    except BadRequest as exc:
        return _refused(frame, events.error_from(exc))
    return events.feedback_saved(feedback.turn)


def _refused(frame: dict[str, Any], error: dict) -> dict:
    """Mark an `error` as the answer to a vote: it may arrive while an answer streams on the
    same socket, and the panel must not take it for the end of that answer."""
    turn = frame.get("turn")
    return {**error, "feedback": True, **({"turn": turn} if type(turn) is int else {})}
