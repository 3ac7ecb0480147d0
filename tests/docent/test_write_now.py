"""daphne's connections send a frame when it is written (docent/write_now.py).

A real TCP connection under Twisted's real transport; the reactor is not run, so whatever
Twisted queued stays queued, and what the peer can read was sent by the write itself.
"""

import socket
from collections.abc import Iterator

import pytest
from twisted.internet import protocol, tcp
from twisted.protocols.policies import ProtocolWrapper, WrappingFactory

from docent.http_guard import GuardedServer, PeerLimitedFactory
from docent.write_now import FrameWriter


class _Port:
    _realPortNumber = 0  # all that tcp.Server reads of its listening port (for its repr)


@pytest.fixture
def connection() -> Iterator[tuple]:
    """(daphne's wrapper, its Twisted transport, the peer's socket)."""
    from twisted.internet import reactor

    listener = socket.create_server(("127.0.0.1", 0))
    peer = socket.create_connection(listener.getsockname())
    sock, address = listener.accept()
    listener.close()
    sock.setblocking(False)
    peer.setblocking(False)
    factory = PeerLimitedFactory(
        protocol.Factory.forProtocol(protocol.Protocol),
        per_peer=10,
        max_body=1024,
        exempt=lambda _host: False,
    )
    wrapper = factory.protocol(factory, protocol.Protocol())
    transport = tcp.Server(sock, wrapper, address, _Port(), 1, reactor)
    wrapper.makeConnection(transport)
    yield wrapper, transport, peer
    transport.stopReading()
    transport.stopWriting()
    sock.close()
    peer.close()


def readable(peer: socket.socket) -> bytes:
    try:
        return peer.recv(1 << 20)
    except BlockingIOError:
        return b""


def drain(transport, peer: socket.socket) -> bytes:
    """What the reactor would do: write the queue whenever the socket takes more."""
    received = b""
    while transport._tempDataLen or len(transport.dataBuffer) > transport.offset:
        transport.doWrite()
        received += readable(peer)
    return received + readable(peer)


def test_a_frame_reaches_the_socket_when_written_without_a_reactor_pass(connection):
    from twisted.internet import reactor

    wrapper, transport, peer = connection
    wrapper.write(b"frame one")
    wrapper.writeSequence([b"chunk ", b"of an SSE ", b"answer"])

    assert readable(peer) == b"frame onechunk of an SSE answer"
    assert transport not in reactor.getWriters()  # no epoll registration to undo


def test_bytes_already_queued_keep_their_order(connection):
    wrapper, transport, peer = connection
    transport.write(b"queued first, ")  # Twisted's own path: waits for the reactor
    wrapper.write(b"then this")

    assert readable(peer) == b""
    assert drain(transport, peer) == b"queued first, then this"


def test_what_the_socket_cannot_take_at_once_is_queued_in_order(connection):
    wrapper, transport, peer = connection
    big = bytes(range(256)) * 40_000  # 10 MB: more than the kernel's buffers hold

    wrapper.write(big)
    wrapper.write(b"after")

    assert transport._tempDataLen or len(transport.dataBuffer) > transport.offset
    assert drain(transport, peer) == big + b"after"


def test_websocket_frames_are_written_without_autobahns_debug_line(connection):
    """The per-frame debug arguments autobahn builds even with debug off (`FrameWriter`)."""
    from daphne.ws_protocol import WebSocketFactory

    wrapper, transport, peer = connection
    server = GuardedServer(
        per_peer=10,
        max_body=1024,
        exempt=lambda _host: False,
        application=None,
        endpoints=["tcp:0"],
    )
    server.ws_factory = WebSocketFactory(server, server="docent")  # as daphne's `run` does
    websocket = server.ws_factory.buildProtocol(transport.getPeer())
    websocket.makeConnection(wrapper)
    websocket.sendData(b"\x81\x05hello")

    assert isinstance(websocket, FrameWriter)
    assert readable(peer) == b"\x81\x05hello"
    assert websocket.trafficStats.preopenOutgoingOctetsWireLevel == 7


class _Shouting(ProtocolWrapper):
    """A wrapper that changes the bytes on their way out, as TLS's does."""

    def write(self, data: bytes) -> None:
        self.transport.write(data.upper())


def test_a_connection_under_another_wrapper_is_written_through_it(connection):
    """TLS wraps daphne's connection the same way: its bytes must never go around it."""
    from twisted.internet import reactor

    _, plain, peer = connection
    sock = plain.socket
    inner = PeerLimitedFactory(
        protocol.Factory.forProtocol(protocol.Protocol),
        per_peer=10,
        max_body=1024,
        exempt=lambda _host: False,
    )
    daphnes = inner.protocol(inner, protocol.Protocol())
    shouting = _Shouting(WrappingFactory(protocol.Factory()), daphnes)
    plain.stopReading()
    transport = tcp.Server(sock, shouting, ("127.0.0.1", 1), _Port(), 2, reactor)
    shouting.makeConnection(transport)
    daphnes.write(b"secret")
    received = drain(transport, peer)
    transport.stopReading()

    assert received == b"SECRET"
