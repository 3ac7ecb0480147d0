"""docent/http_guard.py in-process: a real TCP socket under Twisted's transport, the reactor
not run; daphne's HTTP factory behind PeerLimitedFactory, as `serve` builds it."""

import socket

from daphne.http_protocol import HTTPFactory
from twisted.internet import protocol, tcp
from twisted.internet.address import IPv4Address
from twisted.web.http import HTTPChannel

from docent.http_guard import PeerLimitedFactory

UPGRADE = (
    b"GET /ws/chat/ HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
    b"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
)


class _Daphne:
    """What daphne's request asks of its server when it hands a connection to a WebSocket."""

    proxy_forwarded_address_header = None  # `serve` trusts no proxy header in daphne
    server_name = "daphne"

    def __init__(self) -> None:
        self.ws_factory = protocol.Factory.forProtocol(protocol.Protocol)

    def protocol_connected(self, _protocol) -> None:
        pass

    def protocol_disconnected(self, _protocol) -> None:
        pass


class _Port:
    _realPortNumber = 0  # all that tcp.Server reads of its listening port (for its repr)


def test_an_upgraded_socket_no_longer_holds_its_http_channel_and_request():
    # The channel stayed the socket's producer for as long as the WebSocket was open, holding
    # the upgrade request with its headers and body buffer: ~3 KiB per chat socket.
    from twisted.internet import reactor

    listener = socket.create_server(("127.0.0.1", 0))
    peer = socket.create_connection(listener.getsockname())
    sock, (host, port) = listener.accept()
    listener.close()
    sock.setblocking(False)
    factory = PeerLimitedFactory(
        HTTPFactory(_Daphne()), per_peer=10, max_body=1024, exempt=lambda _host: False
    )
    wrapper = factory.buildProtocol(IPv4Address("TCP", host, port))
    transport = tcp.Server(sock, wrapper, (host, port), _Port(), 1, reactor)
    wrapper.makeConnection(transport)
    channel = wrapper.wrappedProtocol._channel  # under twisted.web's HTTP/2 negotiation wrapper
    try:
        assert isinstance(channel, HTTPChannel) and transport.producer is channel

        wrapper.dataReceived(UPGRADE)

        assert type(wrapper.wrappedProtocol) is protocol.Protocol  # the WebSocket's now
        assert transport.producer is None
    finally:
        channel.setTimeout(None)  # its idle timer, on a reactor that never runs here
        transport.stopReading()
        sock.close()
        peer.close()
