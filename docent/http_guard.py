"""Limits daphne lacks: open connections per client address, the time to send a request's
head, and the size of a request body.

Twisted accepts any number of connections from one address and keeps an idle one for a minute
(slowloris, thousands of idle WebSockets), and it buffers a whole request body, past 100 kB in a
temp file, before the application sees a byte: one client could take every file descriptor or
fill the disk. Both are refused here, at the socket, before Django runs.

Twisted's idle timer restarts on every byte, so a client sending one header line every few
seconds (slowloris) held its connection for as long as it liked; each request's head (request
line and headers) must now arrive within `head_seconds`, on a kept-alive connection too. The
body had no deadline either once a complete head was in (a byte every few seconds of a declared
megabyte held the connection, and its temp file, for days): it must arrive within
`body_seconds` of the head.

A form body is passed on as it came: Twisted parsed every urlencoded or multipart POST body
into arguments daphne never reads, on the reactor thread, for any path (2 CPU-seconds for 4 MB
of `a&a&…`, every visitor waiting).

A chunked request body is refused at its head (411 Length Required): Twisted decodes a chunk in
about 5 µs of Python, so a body of one-byte chunks cost 6 CPU-seconds per MB of body (measured
on this machine; one request to the 4 MB limit, 23 s, in slices of 50 ms per read). No client of
the site sends one: browsers and nginx, which buffers bodies, send a Content-Length.

Trusted proxies (DJANGO_TRUSTED_PROXIES) are exempt from the per-address cap: nginx carries
many visitors on its connections and limits them itself.

An IPv6 visitor's /48 has a cap of its own (`per_network`, four addresses' worth by default), as
it has for every other limit: counted by the /64 alone, 1,200 idle connections from twelve /64s
of one /48 used up a web process's 1,024 file descriptors and every other visitor's connection
was dropped at once, `/healthz` included, and a connect loop every 20 s kept it so.
"""

import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from http import HTTPStatus

from daphne.http_protocol import WebRequest
from daphne.server import Server
from twisted.internet import reactor
from twisted.protocols.policies import ProtocolWrapper, WrappingFactory
from twisted.web.http import RESPONSES

from docent.write_now import FrameWriter, WriteNowWrapper
from ops.metrics import refusal_count

logger = logging.getLogger(__name__)

# A client at its connection cap is said to be refused once per this many seconds, with how
# many were refused meanwhile: a line per refusal let one client write 3,900 lines a second.
REFUSALS_LOGGED_EVERY = 60.0
NETWORK = "net:"  # the prefix of an IPv6 /48's count, beside its /64s' (agent.ratelimit)

TOO_LARGE = (b"413 Content Too Large", b"The request body is larger than this server accepts.\n")
LENGTH_REQUIRED = (b"411 Length Required", b"Send the request body with a Content-Length.\n")
# Written by hand at the socket, outside Django: the headers the pages' middleware would add
# to a plain-text error (nosniff, no framing, nothing loads; config/settings.py
# SECURITY_HEADER_MIDDLEWARE). A test compares them with a page's.
REFUSAL_HEADERS = (
    b"X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n"
    b"Referrer-Policy: same-origin\r\nCross-Origin-Opener-Policy: same-origin\r\n"
    b"Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n"
)


# A head line past Twisted's LineReceiver.MAX_LENGTH (16 KB): Twisted dropped the connection
# without a word, where nginx answers (a browser showed "connection reset").
LINE_TOO_LONG = (
    b"414 URI Too Long",
    b"The request's address is longer than this server accepts.\n",
)
HEADER_TOO_LARGE = (
    b"431 Request Header Fields Too Large",
    b"The request's headers are larger than this server accepts.\n",
)


def refusal_bytes(answer: tuple[bytes, bytes], path: bytes = b"") -> bytes:
    """A whole refusal written at the socket: a line of text, or JSON under /api/ as the API's
    other errors are, with the pages' headers, closing the connection."""
    status, body = answer
    kind = b"text/plain; charset=utf-8"
    if path.startswith(b"/api/"):
        detail = body.decode().strip()
        body = json.dumps({"detail": detail, "code": "bad_request"}).encode()
        kind = b"application/json"
    head = (
        b"HTTP/1.1 %s\r\nContent-Type: %s\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n%s\r\n"
        % (status, kind, len(body), REFUSAL_HEADERS)
    )
    return head + body


BAD_REQUEST = (b"400 Bad Request", b"Bad request.\n")


def status_phrase(code: int) -> bytes | None:
    """The standard reason phrase of `code` (None for a status no RFC names)."""
    try:
        return HTTPStatus(code).phrase.encode()
    except ValueError:
        return None


def bad_request_refuse(channel) -> Callable[[], None]:
    """What the HTTP channel answers a head it cannot take (headers past 16 KB together, more
    than 500 of them, a malformed line): 400 with the pages' headers. Twisted's own
    (`_respondToBadRequestAndDisconnect`) was a bare status line with no header or body."""

    def refuse() -> None:
        channel.transport.write(refusal_bytes(BAD_REQUEST, getattr(channel, "_path", b"") or b""))
        channel.loseConnection()

    return refuse


def head_line_refuse(channel) -> Callable[[bytes], None]:
    """What the HTTP channel does with a head line past its MAX_LENGTH: answer 414 (the request
    line) or 431 (a header), then close. Twisted's own (LineReceiver's) closed with no answer."""

    def refuse(line: bytes) -> None:
        path = getattr(channel, "_path", None)  # set once the request line is in
        answer = LINE_TOO_LONG if path is None else HEADER_TOO_LARGE
        channel.transport.write(refusal_bytes(answer, path or b""))
        channel.transport.loseConnection()

    return refuse


def bounded_request(max_body: int) -> type[WebRequest]:
    """daphne's request, refusing a body over `max_body` bytes with 413 before storing it."""

    class BoundedRequest(WebRequest):
        received = 0
        refused = False
        head_done = False

        def __init__(self, *args, **kwargs) -> None:
            # Twisted parses a urlencoded or multipart POST body into `request.args` on the
            # reactor thread before daphne sees the request, and daphne never reads `args`: 4 MB
            # of `a&a&…` cost 2 CPU-seconds there, for any path and before the request cap
            # counted it. Django parses the forms it needs, in the view's thread, within its
            # field caps.
            super().__init__(*args, parsePOSTFormSubmission=False, **kwargs)

        def gotLength(self, length: int | None) -> None:
            self.head_done = True  # Twisted calls this once the headers are all in
            body_expect(self.channel.transport)  # the head's deadline ends, the body's starts
            if length is None and self.chunked_body():
                # Refused before a chunk is decoded: the channel reads no further once its
                # transport is disconnecting (LineReceiver stops after this head's last line).
                self.refuse(LENGTH_REQUIRED)
            elif length is not None and length > max_body:
                self.refuse(TOO_LARGE)
            # Nothing of a refused body is stored: 0 keeps Twisted's small in-memory buffer
            # (None, a length it does not know, opened a temporary file for each refusal).
            super().gotLength(0 if self.refused else length)

        def chunked_body(self) -> bool:  # not `chunked`: Request uses that for its response
            codings = self.requestHeaders.getRawHeaders(b"transfer-encoding") or []
            return any(b"chunked" in coding.lower() for coding in codings)

        def handleContentChunk(self, data: bytes) -> None:
            if self.refused:
                return
            self.received += len(data)
            if self.received > max_body:  # more than the declared length
                self.refuse(TOO_LARGE)
                return
            super().handleContentChunk(data)

        def finish(self) -> None:
            upgraded = self.transport is None  # a WebSocket now owns the connection
            connection = self.channel.transport if self.channel is not None else None
            super().finish()
            if not upgraded and isinstance(connection, ProtocolWrapper):
                head_expect(connection)  # kept alive: the next request's head has a deadline too

        def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
            deadline_end(self.channel.transport)  # the whole body is in
            if not self.refused and path[:1] != b"/" and b"://" in path[:8]:
                path = self.absolute_target(path)
            if not self.refused:
                super().requestReceived(command, path, version)

        def absolute_target(self, target: bytes) -> bytes:
            """`GET http://host/path` (RFC 9112's absolute form, which a server must accept)
            as `GET /path` with that host as the Host: daphne took the whole URL for the path
            (every page a 404) and the Host header for the site, whatever the URL named."""
            scheme, _, rest = target.partition(b"://")
            end = min((i for i in map(rest.find, (b"/", b"?", b"#")) if i >= 0), default=len(rest))
            authority, path = rest[:end], rest[end:]
            if scheme.lower() not in {b"http", b"https"} or not authority or b"@" in authority:
                self.refuse(BAD_REQUEST)  # no host, or a user's name and password in it
                return target
            self.requestHeaders.setRawHeaders(b"host", [authority])
            return path if path.startswith(b"/") else b"/" + path

        def setResponseCode(self, code: int, message: bytes | None = None) -> None:
            # Twisted's table of phrases stops at 1999's statuses: the API's 422 and 429, and
            # 431, went out as "422 Unknown Status", and nginx passes the line on as it is.
            if message is None and code not in RESPONSES:
                message = status_phrase(code)
            super().setResponseCode(code, message)

        def process(self):
            processed = super().process()
            if self.transport is None and self.channel is not None:
                # A WebSocket now owns the connection (daphne took the transport), but the
                # HTTP channel stayed the socket's producer, holding this request, its headers
                # and body buffer for as long as the socket is open (~3 KiB each of 1,000
                # chat sockets). It no longer reacts to a full socket either: its request is
                # never finished, and a channel with a request in hand does not pause reading.
                self.channel.transport.unregisterProducer()
            return processed

        def refuse(self, answer: tuple[bytes, bytes]) -> None:
            self.refused = True
            # Twisted answers "Expect: 100-continue" after gotLength: not after a refusal.
            self.requestHeaders.removeHeader(b"expect")
            # The request line is in (the channel keeps its path until the request is built).
            path = getattr(self.channel, "_path", b"")
            self.channel.transport.write(refusal_bytes(answer, path))
            self.channel.transport.loseConnection()

    return BoundedRequest


def head_expect(connection: ProtocolWrapper) -> None:
    """Start the deadline of the next request head on `connection` (on connect, after a
    response). The connection is the factory's wrapper: the HTTP channel's transport."""
    seconds = getattr(connection, "docent_head_seconds", 0)
    if not seconds or connection.disconnecting:
        return
    deadline_end(connection)
    connection.docent_head_begun = False
    connection.docent_deadline = reactor.callLater(seconds, _head_late, connection)


def body_expect(connection: ProtocolWrapper) -> None:
    """The head is in: start the deadline of the body (ended by `deadline_end`)."""
    deadline_end(connection)
    seconds = getattr(connection, "docent_body_seconds", 0)
    if seconds and not connection.disconnecting:
        connection.docent_deadline = reactor.callLater(seconds, _body_late, connection)


def _body_late(connection: ProtocolWrapper) -> None:
    peer = getattr(connection.getPeer(), "host", "?")
    logger.warning("closed a connection: %s did not send a request body in time", peer)
    connection.loseConnection()


def deadline_end(connection) -> None:
    """Cancel the connection's running deadline, the head's or the body's (one at a time)."""
    deadline = getattr(connection, "docent_deadline", None)
    if deadline is not None and deadline.active():
        deadline.cancel()


def _head_late(connection: ProtocolWrapper) -> None:
    channel = getattr(connection.wrappedProtocol, "_channel", connection.wrappedProtocol)
    pending = getattr(channel, "requests", None)
    if pending and getattr(pending[-1], "head_done", False):
        return  # a pipelined request whose head came in before the previous response ended
    peer = getattr(connection.getPeer(), "host", "?")
    if getattr(connection, "docent_head_begun", True):
        logger.warning("closed a connection: %s did not send a request head in time", peer)
    else:
        # Not a byte of a request: a browser's preconnected or kept-alive socket it never used
        # (Chromium opens several per page). Routine, so not a warning on every first visit.
        logger.debug("closed an idle connection from %s: no request began in time", peer)
    connection.loseConnection()


class HeadWatchedConnection(WriteNowWrapper):
    """Notes whether the awaited request head has begun, to tell an unused socket from a
    head sent too slowly (slowloris); writes go out at once (docent/write_now.py)."""

    docent_head_begun = False

    def dataReceived(self, data: bytes) -> None:
        self.docent_head_begun = True
        super().dataReceived(data)


class PeerLimitedFactory(WrappingFactory):
    """daphne's HTTP factory behind a cap on open connections per client address."""

    protocol = HeadWatchedConnection

    def __init__(
        self,
        wrapped,
        *,
        per_peer: int,
        max_body: int,
        exempt: Callable[[str], bool],
        head_seconds: float = 0,
        body_seconds: float = 0,
        per_network: int | None = None,
        over_rate: Callable[[str], bool] = lambda host: False,
    ) -> None:
        super().__init__(wrapped)
        # Whether an address's request bucket is empty (config/request_rate.py): a new
        # connection from it could only carry refusals, each costing a millisecond of parsing.
        self.over_rate = over_rate
        self.head_seconds = head_seconds
        self.body_seconds = body_seconds
        self.per_peer = per_peer
        # An IPv6 /48's connections, all its /64s together; None: four addresses' worth.
        self.per_network = 4 * per_peer if per_network is None else per_network
        self.exempt = exempt
        self.request_factory = bounded_request(max_body)
        self.open: Counter[str] = Counter()  # peers' (/64s') and /48s' open connections
        # peer -> (refusals not yet logged, when its last line was written)
        self.refused: dict[str, tuple[int, float]] = {}

    def buildProtocol(self, addr) -> ProtocolWrapper | None:
        host = str(getattr(addr, "host", ""))
        peer, network = _peer(host), _network(host)
        full = self._full(peer, network)
        if full and not self.exempt(host):
            self.refusal_log(full)
            return None  # Twisted closes the connection at once
        if self.over_rate(host) and not self.exempt(host):
            # As its requests' 429s are: counted, and said once a minute (ops.refusals).
            refusal_count(reason="http_rate", address=host)
            return None
        protocol = super().buildProtocol(addr)
        protocol.wrappedProtocol.requestFactory = self.request_factory
        # Twisted's generic protocol proxies to the HTTP/1.1 channel (it would switch to HTTP/2
        # on a TLS ALPN; daphne serves plain TCP here).
        channel = getattr(protocol.wrappedProtocol, "_channel", None)
        if channel is not None:
            channel.lineLengthExceeded = head_line_refuse(channel)
            channel._respondToBadRequestAndDisconnect = bad_request_refuse(channel)
        # A trusted proxy sends whole heads and keeps idle connections for reuse; nginx has
        # its own client_header_timeout for the visitors. Not so a body: the cluster's nginx
        # passes most bodies on as the visitor sends them (its own timer, client_body_timeout,
        # restarts on every read, so a byte a minute held a connection for ever), and this is
        # the deadline that bounds the whole body.
        protocol.docent_head_seconds = 0 if self.exempt(host) else self.head_seconds
        protocol.docent_body_seconds = self.body_seconds
        self.open[peer] += 1
        if network:
            self.open[network] += 1
        return protocol

    def _full(self, peer: str, network: str) -> str:
        """The key (the peer's, or its /48's) at its cap, or "" when there is room."""
        if self.open[peer] >= self.per_peer:
            return peer
        if network and self.open[network] >= self.per_network:
            return network
        return ""

    def refusal_log(self, peer: str) -> None:
        """One WARNING line per peer per REFUSALS_LOGGED_EVERY, saying how many were refused.

        A refused connection costs the client one handshake and wrote a line each: one client
        holding its cap and reconnecting in a loop wrote 3,000 lines in 0.8 s.
        """
        count, logged = self.refused.get(peer, (0, float("-inf")))
        now = time.monotonic()
        if now - logged < REFUSALS_LOGGED_EVERY:
            self.refused[peer] = (count + 1, logged)
            return
        logger.warning(
            "refused %d connection%s: %s already has %d open",
            count + 1,
            "" if count == 0 else "s",
            peer.removeprefix(NETWORK),
            self.open[peer],
        )
        self.refused[peer] = (0, now)

    def registerProtocol(self, protocol: ProtocolWrapper) -> None:
        super().registerProtocol(protocol)  # connected: the first head's deadline starts
        head_expect(protocol)

    def unregisterProtocol(self, protocol: ProtocolWrapper) -> None:
        deadline_end(protocol)
        super().unregisterProtocol(protocol)
        host = str(getattr(protocol.getPeer(), "host", ""))
        peer, network = _peer(host), _network(host)
        for key in (peer, network) if network else (peer,):
            self.open[key] -= 1
            if self.open[key] <= 0:
                del self.open[key]
                self.refusals_flush(key)

    def refusals_flush(self, peer: str) -> None:
        """The peer has gone: say how many refusals were not logged yet, and forget it."""
        count, _ = self.refused.pop(peer, (0, 0.0))
        if count:
            logger.warning("refused %d more connections from %s", count, peer.removeprefix(NETWORK))


def _peer(host: str) -> str:
    """What one client's connections count under: an IPv6 client has a whole /64 to connect
    from (counted per address, each of its 2^64 addresses had the full cap), and an
    IPv4-mapped address is its IPv4 address, as the rate limits count them."""
    from agent.ratelimit import address_bucket  # Django is set up before daphne listens

    return address_bucket(host)


def _network(host: str) -> str:
    """The key of the IPv6 /48 a client connects from, or "" (IPv4, or IPv6 carrying IPv4)."""
    from agent.ratelimit import network_bucket

    network = network_bucket(host)
    return NETWORK + network if network else ""


class GuardedServer(Server):
    """daphne's Server, listening through `PeerLimitedFactory`, its WebSockets written by
    `FrameWriter` (docent/write_now.py).

    `Server.run` builds its HTTP factory and listens on it in one method; catching the
    assignment wraps it without copying that method.
    """

    def __init__(
        self,
        *,
        per_peer: int,
        max_body: int,
        exempt: Callable[[str], bool],
        head_seconds: float = 0,
        body_seconds: float = 0,
        per_network: int | None = None,
        over_rate: Callable[[str], bool] = lambda host: False,
        **kwargs,
    ):
        self.guard = {
            "per_peer": per_peer,
            "per_network": per_network,
            "over_rate": over_rate,
            "max_body": max_body,
            "exempt": exempt,
            "head_seconds": head_seconds,
            "body_seconds": body_seconds,
        }
        super().__init__(**kwargs)

    @property
    def http_factory(self) -> PeerLimitedFactory:
        return self._guarded_factory

    @http_factory.setter
    def http_factory(self, factory) -> None:
        self._guarded_factory = PeerLimitedFactory(factory, **self.guard)

    @property
    def ws_factory(self):
        return self._ws_factory

    @ws_factory.setter
    def ws_factory(self, factory) -> None:
        factory.protocol = FrameWriter  # docent/write_now.py
        # A frame the protocol refuses (text that is not UTF-8, a message over the size limit,
        # a broken frame) is answered with a close frame giving RFC 6455's code and autobahn's
        # reason (1007, 1009, 1002), then the connection ends (closeHandshakeTimeout, 1 s, if
        # the client does not answer). autobahn's default reset the TCP connection: no code,
        # no reason, the client's socket dead as if the server had crashed. The floods that
        # FrameWriter cuts are still dropped at once, unanswered.
        # RFC 6455 (version 13) only. autobahn also speaks hybi draft 8 (2011), which no
        # browser has sent since 2012, on a second code path (it reads the origin from
        # Sec-WebSocket-Origin, unchecked for duplicates): a handshake naming it was switched
        # (101). It is refused as any unknown version is, naming 13 in Sec-WebSocket-Version.
        factory.setProtocolOptions(failByDrop=False, versions=[13])
        self._ws_factory = factory
