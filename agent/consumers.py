"""The chat WebSocket: validate frames, run one turn at a time as a task, forward its events."""

import asyncio
import logging
import time
from contextlib import suppress
from types import SimpleNamespace

from autobahn.exception import Disconnected
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.db import DatabaseError
from django.utils import translation

from agent import events, ratelimit
from agent.coalesce import TextFrames, text_frames
from agent.exceptions import BadRequest, SharedStateDown
from agent.feedback import FeedbackQueue
from agent.frames import FrameError, FrameWindow, json_parse
from agent.loop import VisitorGone
from agent.runner import ChatMessage, Visitor, message_parse, runner
from agent.turns import new_session_check
from agent.visitor_session import session_ensure, session_key_known
from ops.metrics import OPEN_SOCKETS, turn_refused_count

logger = logging.getLogger(__name__)

TERMINAL = {"done", "error"}
# The close code of the frame rate limit: 1008 (policy violation), moved into the range RFC
# 6455 leaves to applications. autobahn sends no protocol code but 1000 for an application:
# asked for 1008, it raised, daphne logged "Exception inside application" with a traceback at
# ERROR for every socket closed this way, and the client read 1011 (internal error).
POLICY_VIOLATION = 4008
# The close code of a socket idle for WEBSOCKET_IDLE_SECONDS: the panel does not reconnect on
# it, but when the reader next sends something (static/chat/connection.js).
IDLE = 4010
# What the consumer's `disconnect` is told when the visitor's close frame was heard by autobahn
# but its disconnect had not reached us yet: RFC 6455's "closed abnormally" (no code known).
GONE = 1006
NOTHING_TO_STOP = "Nothing to stop: no answer is running."


class ChatConsumer(AsyncJsonWebsocketConsumer):
    # No channel layer: nothing sends to a chat socket from outside, and with Redis each
    # socket would hold a receive on it (a round trip, a task, and a Redis timeout that
    # closed sockets under load in bench/chat_load.py).
    channel_layer_alias = None
    turn: asyncio.Task | None = None
    frames: TextFrames | None = None  # the running turn's text coalescing
    # True from a message until its `done`/`error` is sent; the task may still be tidying up.
    answering: bool = False
    counted: bool = False  # in the open-sockets gauge (ops.metrics)
    idle_watch: asyncio.Task | None = None

    async def __call__(self, scope, receive, send) -> None:
        # daphne kills an instance whose disconnect outlasts its close timeout (the handler
        # waits for the database thread first, and a lock can hold that thread): the socket
        # leaves the gauge on that path too, not only in `disconnect`.
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.uncount()

    async def connect(self) -> None:
        self.frame_times = FrameWindow(settings.AGENT_FRAMES_PER_MINUTE)
        self.votes = FeedbackQueue(reply=self.vote_answer, limit=settings.WEBSOCKET_QUEUED_FRAMES)
        await self.accept()
        OPEN_SOCKETS.inc()
        self.counted = True
        self.active_at = time.monotonic()
        self.idle_watch = asyncio.create_task(self.close_when_idle())

    async def close_when_idle(self) -> None:
        """Close the socket once its client has sent nothing for WEBSOCKET_IDLE_SECONDS.

        A browser answers pings by itself, so a tab left open held a socket (a file descriptor,
        a consumer, a slot in the address's connections) for daphne's whole day. The time runs
        from the client's last frame or the end of the last answer, never during one.
        """
        limit = settings.WEBSOCKET_IDLE_SECONDS
        while True:
            left = self.active_at + limit - time.monotonic()
            if left <= 0 and not self.answering:
                break
            await asyncio.sleep(left if left > 0 else min(limit, 5))
        with suppress(Disconnected, VisitorGone):
            await self.close(code=IDLE)

    def uncount(self) -> None:
        if self.counted:
            OPEN_SOCKETS.dec()
            self.counted = False

    async def websocket_receive(self, message: dict) -> None:
        try:
            await super().websocket_receive(message)
        except VisitorGone:
            # The visitor closed the socket while one of its frames was answered (a bad frame,
            # a vote, Stop), its disconnect still behind our unsent frames on a slow link. The
            # turn is cancelled and saved as on that disconnect, and the socket ends quietly.
            await self.disconnect(GONE)
            raise StopConsumer from None

    async def receive(self, text_data=None, bytes_data=None, **kwargs) -> None:
        self.active_at = time.monotonic()
        over = await self.frames_over()
        if over:
            logger.warning("chat socket from %s closed: %s", self.client_ip(), over)
            await self.close(code=POLICY_VIOLATION)
            await self.disconnect(POLICY_VIOLATION)
            raise StopConsumer  # the frames still queued behind this one are dropped with it
        # A bad frame gets an answer, not a closed socket: size, depth and text are bounded.
        if text_data is None:
            await self.send_error(events.BAD_REQUEST, "Frames must be text (JSON), not binary.")
            return
        try:
            content = json_parse(text_data)
        except FrameError as exc:
            await self.send_error(events.BAD_REQUEST, str(exc))
            return
        if not isinstance(content, dict):
            await self.send_error(events.BAD_REQUEST, 'Frames must be JSON objects with a "type".')
            return
        await self.receive_json(content)

    async def receive_json(self, content: dict, **kwargs) -> None:
        kind = content.get("type")
        if kind == "stop":
            await self.stop()
        elif kind == "feedback":
            # Not a turn: allowed while an answer streams, and never `busy`.
            # A visitor without a session has no answers to vote on: no new session for it.
            known = getattr(self, "_session_key", None) or session_key_known(
                self.scope.get("cookies", {}).get(settings.SESSION_COOKIE_NAME)
            )
            # Saved beside the frames, not before the next one is read (a Stop right after).
            await self.votes.put(frame=content, session_key=known, client_ip=self.client_ip())
        elif kind != "message":
            await self.send_error(
                events.BAD_REQUEST,
                # The type is not echoed back: it is any JSON value the client sent.
                'Unknown frame type; use "message", "stop" or "feedback".',
            )
        elif self.answering:
            await self.send_error(
                events.BUSY, "Still answering the previous message. Wait, or press Stop."
            )
        else:
            try:
                message = message_parse(content)
            except BadRequest as exc:
                await self.send_json(events.error_from(exc))
                return
            try:
                session_key = await self.session_key(message)
            except BadRequest as exc:  # refused before a new session's row was written
                await self.send_json(events.error_from(exc))
                return
            except DatabaseError:
                logger.exception("the visitor's session could not be saved")
                turn_refused_count(reason="database")
                await self.send_json(events.database_unavailable())
                return
            except SharedStateDown as exc:  # a new session is counted there
                turn_refused_count(reason="shared_state")
                await self.send_json(events.error_from(exc))
                return
            visitor = Visitor(
                session_key=session_key, client_ip=self.client_ip(), language=self.language()
            )
            # A task, so `stop` and disconnect are heard while the answer streams.
            self.answering = True
            self.frames = text_frames(self.emit)
            self.turn = asyncio.create_task(
                runner.run(message=message, visitor=visitor, emit=self.frames)
            )

    async def frames_over(self) -> str:
        """Why this frame is one too many, or "": the socket's own moving window first (no
        round trip), then its address's and its /48's, all of their sockets together."""
        if self.flooding():
            return f"over {settings.AGENT_FRAMES_PER_MINUTE} frames a minute"
        return await ratelimit.frame_over(client_ip=self.client_ip())

    def flooding(self) -> bool:
        """True when this frame is one too many for the last 60 s (a moving window)."""
        return self.frame_times.over(time.monotonic())

    async def emit(self, event: dict) -> None:
        if event["type"] in TERMINAL:
            self.answering = False
            self.active_at = time.monotonic()  # the reader has an answer to read
        await self.send_json(event)  # VisitorGone once the visitor has left (`send`)

    async def vote_answer(self, event: dict) -> None:
        """Answer a vote, from its own task; the visitor may have left meanwhile."""
        try:
            await self.send_json(event)
        except VisitorGone:  # as in websocket_receive: the turn is cancelled and saved
            await self.disconnect(GONE)

    async def stop(self) -> None:
        if not self.answering:
            # Answered, or a client waiting for `cancelled` waits for ever; marked refused, as
            # the answer may have just ended: a client must not read this as a next one's end.
            await self.send_json(events.refused(events.BAD_REQUEST, NOTHING_TO_STOP))
            return
        await self.cancel_turn()
        self.answering = False
        if self.frames is not None:  # the visitor sees all the text the stopped turn keeps
            await self.frames.flush()
            self.frames.close()
        await self.send_error(events.CANCELLED, "Stopped.")

    async def disconnect(self, code: int) -> None:
        self.uncount()
        if self.idle_watch is not None and self.idle_watch is not asyncio.current_task():
            self.idle_watch.cancel()
        if self.frames is not None:  # no one to send the waiting text to
            self.frames.close()
        await self.cancel_turn()

    async def cancel_turn(self) -> None:
        if self.turn is not None and not self.turn.done():
            self.turn.cancel()
            with suppress(asyncio.CancelledError):
                await self.turn

    async def send_error(self, code: str, message: str) -> None:
        # While an answer streams, the refusal of the frame just read is not that answer's
        # end: a client reads an `error` as its turn's end, and the rest reached nobody.
        refusal = events.refused if self.answering else events.error
        await self.send_json(refusal(code, message))

    async def session_key(self, message: ChatMessage) -> str:
        # The session row is written on the first message, not when the page or socket opens,
        # and not for a message whose turn could not start (an unknown page or conversation).
        if not getattr(self, "_session_key", None):
            cookie = self.scope.get("cookies", {}).get(settings.SESSION_COOKIE_NAME)
            self._session_key = await session_ensure(
                self.scope["session"],
                cookie,
                client_ip=self.client_ip(),
                before_write=new_session_check(message),
            )
        return self._session_key

    def language(self) -> str:
        """The language the site's pages are shown in to this visitor, chosen as for a page
        (LocaleMiddleware: the language cookie, then Accept-Language): no middleware sets it
        on a socket."""
        headers = dict(self.scope.get("headers") or [])
        accept = headers.get(b"accept-language", b"").decode("latin-1")
        page = SimpleNamespace(
            COOKIES=self.scope.get("cookies", {}), META={"HTTP_ACCEPT_LANGUAGE": accept}
        )
        return translation.get_language_from_request(page)

    def client_ip(self) -> str:
        client = self.scope.get("client") or ("unknown", 0)
        return str(client[0])

    async def send_json(self, content: dict, close: bool = False) -> None:
        # Channels' default goes through json.dumps: this is one orjson call per frame.
        await self.send(text_data=events.encode(content).decode(), close=close)

    async def send(self, text_data=None, bytes_data=None, close=False) -> None:
        """Send a frame; VisitorGone when the visitor has closed the socket already.

        autobahn refuses a send ("Attempt to send on a closed protocol") from the moment the
        visitor's close frame arrives, and daphne passes the disconnect on only once our unsent
        frames are out: on a slow link, seconds later. Escaping a handler, `Disconnected` was
        logged by daphne as "Exception inside application" with a traceback at ERROR, and the
        consumer ended without cancelling its turn (which went on answering nobody unless its
        own next frame was refused the same way).
        """
        try:
            await super().send(text_data=text_data, bytes_data=bytes_data, close=close)
        except Disconnected as exc:
            raise VisitorGone(str(exc)) from exc
