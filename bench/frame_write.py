"""CPU per WebSocket frame written by daphne's connections: stock against Docent's.

    python bench/frame_write.py [--n 300] [--rounds 400]

N real loopback TCP connections, each under Twisted's real TCP transport on the asyncio
reactor daphne runs. A round writes one text frame (the bytes of a typical coalesced `text`
event) to every connection through the WebSocket protocol's `sendData`, then runs the event
loop until Twisted has nothing left to write: what a web process does for each frame after
the frame is built. Only that is timed, as the loop thread's CPU time (`time.thread_time`);
the peers are read between rounds, untimed. The modes alternate round by round, so the
machine's load falls on both:
- `stock`: daphne's WebSocketProtocol behind Twisted's plain ProtocolWrapper (main before
  docent/write_now.py): autobahn's `sendData`, a queued write sent on the loop's next pass;
- `write-now`, `frame-writer`: each of Docent's two changes alone;
- `docent`: FrameWriter behind WriteNowWrapper (docent/write_now.py), as `serve` runs;
- `docent-unix`: the same over Unix sockets (what nginx to daphne over a socket file would
  cost; not how the cluster runs).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import time
from pathlib import Path

from twisted.internet import asyncioreactor

asyncioreactor.install(asyncio.new_event_loop())  # as daphne: Twisted over an asyncio loop

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import raise_nofile  # noqa: E402
from daphne.ws_protocol import WebSocketFactory, WebSocketProtocol  # noqa: E402
from twisted.internet import protocol, reactor, tcp, unix  # noqa: E402
from twisted.protocols.policies import ProtocolWrapper, WrappingFactory  # noqa: E402

from docent.write_now import FrameWriter, WriteNowWrapper  # noqa: E402

PAYLOAD = b'{"type":"text","content":"tok tok tok tok tok "}'
FRAME = bytes([0x81, len(PAYLOAD)]) + PAYLOAD  # a server's unmasked text frame
MODES = {
    "stock": (ProtocolWrapper, WebSocketProtocol),
    "write-now": (WriteNowWrapper, WebSocketProtocol),
    "frame-writer": (ProtocolWrapper, FrameWriter),
    "docent": (WriteNowWrapper, FrameWriter),
    "docent-unix": (WriteNowWrapper, FrameWriter),  # over a Unix socket instead of TCP
}


class _Port:
    _realPortNumber = 0  # all that tcp.Server reads of its listening port


def connections(n: int, mode: str) -> list[tuple[object, tcp.Server, socket.socket]]:
    """N (WebSocket protocol, its transport, the peer's socket) for one mode."""
    wrapper_class, websocket_class = MODES[mode]
    wrapping = WrappingFactory(protocol.Factory.forProtocol(protocol.Protocol))
    factory = WebSocketFactory(None, server="bench")
    factory.protocol = websocket_class
    # The connections stay before their handshake (sendData works there): no timer closes them.
    factory.setProtocolOptions(openHandshakeTimeout=0)
    listener = socket.create_server(("127.0.0.1", 0), backlog=n)
    made = []
    for number in range(n):
        if mode.endswith("-unix"):
            sock, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            address, server_class = "", unix.Server
        else:
            peer = socket.create_connection(listener.getsockname())
            sock, address = listener.accept()
            server_class = tcp.Server
        sock.setblocking(False)
        peer.setblocking(False)
        wrapper = wrapper_class(wrapping, protocol.Protocol())
        transport = server_class(sock, wrapper, address, _Port(), number, reactor)
        wrapper.makeConnection(transport)
        websocket = factory.buildProtocol(transport.getPeer())
        websocket.makeConnection(wrapper)
        made.append((websocket, transport, peer))
    listener.close()
    return made


def one_round(conns, loop: asyncio.AbstractEventLoop) -> float:
    """One frame to every connection and the loop run until all were sent: CPU seconds."""
    started = time.thread_time()
    for websocket, _, _ in conns:
        websocket.sendData(FRAME)
    while reactor.getWriters():
        loop.run_until_complete(asyncio.sleep(0))
    return time.thread_time() - started


def drain(conns) -> None:
    for _, _, peer in conns:
        try:
            while peer.recv(65536):
                pass
        except BlockingIOError:
            pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="connections per mode")
    parser.add_argument("--rounds", type=int, default=400, help="frames per connection and mode")
    args = parser.parse_args()
    raise_nofile()  # two sockets per connection and mode
    loop = reactor._asyncioEventloop
    asyncio.set_event_loop(loop)
    modes = {mode: connections(args.n, mode) for mode in MODES}
    cpu = dict.fromkeys(MODES, 0.0)
    for number in range(args.rounds):
        order = list(MODES)[number % len(MODES) :] + list(MODES)[: number % len(MODES)]
        for mode in order:
            cpu[mode] += one_round(modes[mode], loop)
            drain(modes[mode])
    frames = args.n * args.rounds
    print(f"{args.n} connections, {args.rounds} rounds, {frames} frames per mode")
    print("| mode | CPU µs / frame | × stock |")
    print("|---|---|---|")
    for mode in MODES:
        per_frame = cpu[mode] / frames * 1e6
        print(f"| {mode} | {per_frame:.2f} | {cpu[mode] / cpu['stock']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
