"""Frames go to the socket when they are written, not on the reactor's next pass.

Twisted queues every write: it registers the socket as a writer (an `epoll_ctl`), sends on the
next loop pass through its logging context and `doWrite`, then unregisters (another
`epoll_ctl`). A streamed answer writes about 20 small frames a second per socket, and at a
thousand sockets that bookkeeping cost more web CPU than the `send` itself (bench/chat_load.py
--profile: "event loop, twisted"). asyncio's own transports send at once when nothing is
queued; this does the same for daphne's connections. Anything that cannot go at once (a full
socket buffer, a broken connection, data already queued) takes Twisted's usual path, so the
order of the bytes and the handling of errors do not change.
"""

from __future__ import annotations

import logging
import time
from http import HTTPStatus

from daphne.ws_protocol import WebSocketProtocol
from django.conf import settings
from twisted.internet import tcp
from twisted.protocols.policies import ProtocolWrapper

from agent.frames import FrameWindow

logger = logging.getLogger(__name__)


_STATUS_CODES = frozenset(status.value for status in HTTPStatus)


def transport_write_now(transport, data: bytes) -> bool:
    """Send `data` at once when the transport has nothing queued; False: it was not sent
    (the caller writes it the usual way). A partial send queues the rest."""
    if not _idle_socket(transport):
        return False
    sent = transport.writeSomeData(data)
    if isinstance(sent, BaseException):  # lost: Twisted's own write path reports it
        return False
    if sent < len(data):
        transport.write(data[sent:])
    return True


def _idle_socket(transport) -> bool:
    """A plain TCP/UNIX connection, open for writing, with no bytes waiting in its buffers.

    The type check matters: a wrapper such as TLS's hands unknown attributes on to the socket's
    transport, and writing there would send around the wrapper (plaintext past TLS).
    """
    return (
        isinstance(transport, tcp.Connection)
        and not transport.TLS
        and transport.connected
        and not transport.disconnecting
        and not transport._writeDisconnected
        and not transport._tempDataLen
        and len(transport.dataBuffer) == transport.offset
    )


class WriteNowWrapper(ProtocolWrapper):
    """The per-connection wrapper of docent/http_guard.py, sending writes at once."""

    def write(self, data: bytes) -> None:
        if not data or not transport_write_now(self.transport, data):
            self.transport.write(data)

    def writeSequence(self, data) -> None:
        # twisted.web writes each chunk of a streamed (SSE) response as a sequence.
        self.write(b"".join(data))


class FrameWriter(WebSocketProtocol):
    """daphne's WebSocket protocol without autobahn's per-frame debug line.

    autobahn's `sendData` builds the arguments of a `log.debug` call for every frame it
    writes (`hltype`/`hlval` colour the text through click), whether or not debug logging
    is on: 3.5% of a web process's CPU while 300 answers stream (bench/chat_load.py
    --profile). Its plain write is done here as it does it; queued, chopped or logged
    writes still go through autobahn.

    It also bounds what a client may send below the consumer: frames waiting for it
    (`onMessage`), and frames of any kind on the wire (`onFrameBegin`).
    """

    wire_frames: FrameWindow | None = None

    def onConnect(self, request):
        # daphne decodes Sec-WebSocket-Protocol as ASCII outside any guard, and autobahn keeps
        # a raw byte such as 0xff: one in a handshake was a 500 echoing the decode error and a
        # traceback at ERROR, before the application (and the request bucket) saw it, as often
        # as a client sent it. A protocol name is an ASCII token (RFC 6455): a header with
        # anything else names none, and the handshake goes on as one without it.
        protocols = request.headers.get("sec-websocket-protocol")
        if protocols is not None and not protocols.isascii():
            del request.headers["sec-websocket-protocol"]
        return super().onConnect(request)

    def sendHttpErrorResponse(self, code: int, reason: str, responseHeaders=None) -> None:
        """A handshake autobahn or daphne refuses (no or a bad key, an unknown version, a
        protocol named twice, a foreign Origin): its reason was the status line's phrase,
        quoting what the client sent (`400 duplicate protocol "<b>x</b>" specified …`), with
        none of the pages' headers and no body. The standard phrase now, the pages' headers,
        and the reason as a line of text."""
        from docent.http_guard import REFUSAL_HEADERS  # that module imports this one

        phrase = HTTPStatus(code).phrase if code in _STATUS_CODES else "Error"
        body = f"{reason}\n".encode()
        extra = "".join(f"{name}: {value}\r\n" for name, value in responseHeaders or ())
        head = (
            f"HTTP/1.1 {code} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n{extra}"
        )
        self.sendData(head.encode() + REFUSAL_HEADERS + b"\r\n" + body)

    def onFrameBegin(self) -> None:
        # The consumer counts messages, and daphne's queue holds messages: pings, pongs and a
        # message's continuation frames reach neither. One socket sending empty continuations
        # (6 bytes each, a message never finished) or pings (each answered with a pong) was
        # never closed, and 24 MB of them took 18.6 CPU-seconds of the process's one event
        # loop, every other visitor's answers waiting behind it (/healthz: 2.5 s).
        if self.wire_flooding():
            logger.warning(
                "chat socket from %s dropped: over %d frames a minute on the wire",
                getattr(self.transport.getPeer(), "host", "?"),
                settings.WEBSOCKET_FRAMES_PER_MINUTE,
            )
            self.dropConnection(abort=True)  # closed: autobahn reads no further frame
            return
        super().onFrameBegin()

    def wire_flooding(self) -> bool:
        """True when this frame is one too many for the last 60 s (a moving window)."""
        if self.wire_frames is None:
            self.wire_frames = FrameWindow(settings.WEBSOCKET_FRAMES_PER_MINUTE)
        return self.wire_frames.over(time.monotonic())

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        # daphne queues every frame for the application without a bound, and autobahn reads
        # as fast as the client writes: 8 MB of tiny frames on one socket grew the process
        # by 250 MB (and 20 CPU-seconds) before the consumer saw the hundredth. A browser
        # never has more than a few waiting, so past the bound the connection is dropped;
        # the consumer still gets its disconnect after the frames already queued.
        queue = getattr(self, "application_queue", None)
        if queue is not None and queue.qsize() >= settings.WEBSOCKET_QUEUED_FRAMES:
            self.dropConnection(abort=True)
            return
        super().onMessage(payload, isBinary)

    def sendData(self, data: bytes, sync: bool = False, chopsize: int | None = None) -> None:
        if sync or chopsize or self.send_queue or self.logOctets:
            super().sendData(data, sync=sync, chopsize=chopsize)
            return
        self.transport.write(data)
        if self.state == WebSocketProtocol.STATE_OPEN:
            self.trafficStats.outgoingOctetsWireLevel += len(data)
        elif self.state in (
            WebSocketProtocol.STATE_CONNECTING,
            WebSocketProtocol.STATE_PROXY_CONNECTING,
        ):
            self.trafficStats.preopenOutgoingOctetsWireLevel += len(data)
