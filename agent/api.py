"""The chat over HTTP: SSE for clients without WebSockets, and the transcript for reloads."""

import asyncio
import contextvars
import logging
import uuid
from collections.abc import AsyncIterator

from asgiref.sync import SyncToAsync, sync_to_async
from channels.db import database_sync_to_async
from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.utils.cache import patch_cache_control, patch_vary_headers
from ninja import Router, Status

from agent import events, ratelimit, selectors
from agent.coalesce import text_frames
from agent.exceptions import BadRequest, SharedStateDown
from agent.feedback import feedback_submit
from agent.frames import CONVERSATION_ID_INVALID
from agent.leases import conversation_wait_saved
from agent.runner import ChatMessage, Visitor, message_parse, runner
from agent.schemas import ChatIn, ConversationOut, ErrorOut, FeedbackIn, FeedbackOut
from agent.services import FEEDBACK_NOT_FOUND, conversation_hide
from agent.shared import SHARED_STATE_RETRY_SECONDS
from agent.turns import new_session_check
from agent.visitor_session import session_ensure, session_key_known
from config.concurrency import connections_close_here
from ops.metrics import refusal_count, turn_refused_count

logger = logging.getLogger(__name__)

router = Router(tags=["chat"])

TERMINAL = {"done", "error"}
# What the WebSocket says for the same field (agent.turns.message_parse).
FIELD_MESSAGES = {
    "conversation_id": CONVERSATION_ID_INVALID,
    "content": "The message must be text.",
    "page": "page must be an article slug.",
}


@router.post(
    "/chat",
    response={200: None, 403: ErrorOut, 503: ErrorOut},
    summary="Ask the assistant (Server-Sent Events)",
    description=(
        "Runs one turn and streams the chat protocol's events as `text/event-stream`: "
        "`start`, `text`, `tool_start`, `tool_end`, `citation`, then `done` or `error`. "
        "Only `application/json` from the site's own origin (or DJANGO_CHAT_ALLOWED_ORIGINS). "
        "503 before any event: this worker is shutting down; ask again (behind the proxy, "
        "nginx already does, on another worker)."
    ),
)
async def chat(request: HttpRequest, payload: ChatIn) -> HttpResponse:
    # Origin and content type were checked before the body was parsed (config/origins.py).
    cookie = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    client_ip = _client_ip(request)
    if payload.type == "feedback":  # votes need no new session: a new visitor has no answers
        visitor = Visitor(session_key=session_key_known(cookie), client_ip=client_ip)
        return _event_response(_feedback_stream(payload, visitor))
    # The message is checked before the session is written, as on the WebSocket: a client
    # without a cookie sending empty or malformed messages wrote a session row for each one.
    try:
        message = message_parse(payload.dict())
    except BadRequest as exc:
        return _event_response(_one_event(events.error_from(exc)))
    try:
        session_key = await session_ensure(
            request.session, cookie, client_ip=client_ip, before_write=new_session_check(message)
        )
    except BadRequest as exc:  # refused before a new session's row was written
        return _event_response(_one_event(events.error_from(exc)))
    except DatabaseError:  # as the WebSocket does: an `error` event, not a bare 500 page
        logger.exception("the visitor's session could not be saved")
        turn_refused_count(reason="database")
        request.session.modified = False  # or the session middleware tries again, and 500s
        return _event_response(_one_event(events.database_unavailable()))
    except SharedStateDown as exc:  # a new session is counted there
        turn_refused_count(reason="shared_state")
        request.session.modified = False
        return _event_response(_one_event(events.error_from(exc)))
    if runner.closing:
        turn_refused_count(reason="draining")
        # Nothing has started: a plain 503, which nginx retries on a live worker (a request on
        # a kept-alive connection to this draining one still reaches it after its socket closed).
        return Status(503, {"detail": "This server is restarting. Please ask again."})
    language = getattr(request, "LANGUAGE_CODE", "")  # LocaleMiddleware's, as for the page
    visitor = Visitor(session_key=session_key, client_ip=client_ip, language=language)
    return _event_response(_event_stream(message, visitor))


def invalid_chat_request(errors: list[dict]) -> StreamingHttpResponse:
    """A chat body whose fields do not fit the schema: one `bad_request` event, as the
    WebSocket answers the same frame, instead of ninja's 422 with pydantic's details."""
    fields = [str(e["loc"][-1]) for e in errors if e.get("loc")]
    # Only the schema's own names are said back: a key is the sender's text.
    field = next((f for f in fields if f in ChatIn.model_fields), "body")
    message = FIELD_MESSAGES.get(field, f"The request's {field} is not valid.")
    return _event_response(_one_event(events.error(events.BAD_REQUEST, message)))


def _event_response(stream: AsyncIterator[bytes]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(stream, content_type="text/event-stream")
    # Streams must not be buffered by proxies (nginx) or cached.
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


async def _one_event(event: dict) -> AsyncIterator[bytes]:
    yield events.sse_encode(event)


@router.get(
    "/conversations/{conversation_id}",
    response={200: ConversationOut, 404: ErrorOut, 429: ErrorOut, 503: ErrorOut},
    summary="A conversation's transcript (the owner's session only)",
)
async def conversation_detail(
    request: HttpRequest, conversation_id: uuid.UUID, response: HttpResponse
):
    # A transcript is one visitor's: no shared cache may keep it (the URL alone is its key).
    patch_cache_control(response, private=True, no_store=True)
    patch_vary_headers(response, ("Cookie",))
    refused = await _transcript_refused(request, response)
    if refused is not None:
        return refused
    session_key = session_key_known(request.session.session_key)
    # A reload right after an answer must not miss the turn still being saved, on any worker.
    await _conversation_saved(conversation_id)
    restored = await database_sync_to_async(_restore_owned)(conversation_id, session_key)
    if restored is None:
        return Status(404, {"detail": "No such conversation."})
    return restored


async def _transcript_refused(request: HttpRequest, response: HttpResponse) -> Status | None:
    """A 429 with Retry-After when the address has asked for too many transcripts, checked
    before any database work (a refused request costs none); None when it may go on."""
    refusal = await ratelimit.transcript_allow(client_ip=_client_ip(request))
    if refusal is None:
        return None
    refusal_count(reason=refusal.reason, address=_client_ip(request))
    response["Retry-After"] = str(refusal.retry_after)
    return Status(429, {"detail": refusal.message})


async def _conversation_saved(conversation_id: uuid.UUID) -> None:
    """Return once the conversation's last turn is saved, by this process or any other."""
    await runner.saver.wait_for_conversation(str(conversation_id))
    await conversation_wait_saved(str(conversation_id))


def _restore_owned(conversation_id: uuid.UUID, session_key: str) -> dict | None:
    # One trip to the database thread for both reads.
    conversation = selectors.conversation_get_owned(
        conversation_id=conversation_id, session_key=session_key
    )
    return (
        None if conversation is None else selectors.conversation_restore(conversation=conversation)
    )


@router.delete(
    "/conversations/{conversation_id}",
    response={204: None, 404: ErrorOut, 429: ErrorOut, 503: ErrorOut},
    summary="Delete your conversation from your chats (the owner's session only)",
    description=(
        "It can no longer be read, continued or voted on from this session. The site's admins "
        "keep it for review, as they keep every conversation."
    ),
)
async def conversation_delete(
    request: HttpRequest, conversation_id: uuid.UUID, response: HttpResponse
):
    refused = await _transcript_refused(request, response)
    if refused is not None:
        return refused
    session_key = session_key_known(request.session.session_key)
    # A turn still being saved would otherwise land after the delete and be restored with it.
    await _conversation_saved(conversation_id)
    hidden = await database_sync_to_async(conversation_hide)(
        conversation_id=conversation_id, session_key=session_key
    )
    if not hidden:
        return Status(404, {"detail": "No such conversation."})
    return Status(204, None)


@router.post(
    "/conversations/{conversation_id}/turns/{turn}/feedback",
    response={200: FeedbackOut, 400: ErrorOut, 404: ErrorOut, 429: ErrorOut, 503: ErrorOut},
    summary="Vote on one of your answers (the owner's session only)",
    description='One vote per answer; a new vote replaces it and `"none"` clears it.',
)
async def turn_feedback(
    request: HttpRequest,
    conversation_id: uuid.UUID,
    turn: int,
    payload: FeedbackIn,
    response: HttpResponse,
):
    frame = {"conversation_id": conversation_id, "turn": turn, **payload.dict()}
    session_key = session_key_known(request.session.session_key)
    event = await feedback_submit(
        frame=frame, session_key=session_key, client_ip=_client_ip(request)
    )
    if event["type"] == "feedback_saved":
        return event
    if event["code"] == events.RATE_LIMITED:
        # A 429 with Retry-After, as the other limits answer: a 400 told a client its vote was
        # malformed, so it neither waited nor retried.
        response["Retry-After"] = str(event["retry_after"])
        return Status(429, {"detail": event["message"]})
    if event["code"] == events.UNAVAILABLE:  # Redis away: nothing counted, try again shortly
        response["Retry-After"] = str(SHARED_STATE_RETRY_SECONDS)
        return Status(503, {"detail": event["message"]})
    status = 404 if event["message"] == FEEDBACK_NOT_FOUND else 400
    return Status(status, {"detail": event["message"]})


async def _feedback_stream(payload: ChatIn, visitor: Visitor) -> AsyncIterator[bytes]:
    frame = payload.dict(exclude={"content", "page"})
    saved = await feedback_submit(
        frame=frame, session_key=visitor.session_key, client_ip=visitor.client_ip
    )
    yield events.sse_encode(saved)


async def _event_stream(message: ChatMessage, visitor: Visitor) -> AsyncIterator[bytes]:
    queue: asyncio.Queue[dict] = asyncio.Queue()
    frames = text_frames(queue.put)
    # The session is saved by now (middleware ran before the first byte): this request's
    # thread needs no connection while the turn streams, and the turn's own database calls
    # go where the WebSocket's do. A turn used to hold one connection for its whole stream,
    # which capped SSE streams at what PostgreSQL allows.
    await sync_to_async(connections_close_here)()  # in the request's thread
    turn = asyncio.create_task(
        runner.run(message=message, visitor=visitor, emit=frames), context=_outside_request()
    )
    try:
        while True:
            event = await queue.get()
            yield events.sse_encode(event)
            if event["type"] in TERMINAL:
                break
        # A turn the drain cancelled has sent `unavailable` and ends cancelled: awaited
        # plainly, that cancellation would cut the response before its last chunk.
        [ended] = await asyncio.gather(turn, return_exceptions=True)
        if isinstance(ended, Exception):  # the visitor has its ending; the log gets the rest
            logger.error("chat turn failed after its last event", exc_info=ended)
    finally:
        # The client went away (or the server is stopping): cancel the turn; it is saved.
        frames.close()
        if not turn.done():
            turn.cancel()
            await asyncio.gather(turn, return_exceptions=True)


def _outside_request() -> contextvars.Context:
    """The current context, minus the request's thread: thread-sensitive calls made in it run
    on the process's shared database thread, as a WebSocket consumer's do, not on a thread
    (and a connection) of this request's that lives as long as the stream."""
    context = contextvars.copy_context()
    context.run(SyncToAsync.thread_sensitive_context.set, None)  # type: ignore[arg-type]
    return context


def _client_ip(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR", "unknown")
