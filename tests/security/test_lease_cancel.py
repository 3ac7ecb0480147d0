"""A turn cancelled while Redis takes its lock and slots lets them go once Redis has answered.

The lock is one script call: once sent, Redis runs it whether or not anyone reads the answer.
A visitor who closed the socket while it was on its way (a slow network or a busy Redis) left
the turn's conversation lock and its session's and address's slots taken and unrenewed until
AGENT_LEASE_SECONDS (30 s) ran out: two such closes and the session could not ask at all.
"""

import contextlib
import hashlib
import json
import socket
import threading
from urllib.parse import urlsplit

import pytest
import redis
from websockets.sync.client import connect

from agent.shared import ACQUIRE
from testing_support.waits import open_sockets, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


class RedisRelay:
    """A TCP relay in front of redis-server that holds the next command carrying `marker`
    until `release()`: the command then reaches Redis, even from a client that left."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.upstream = (parts.hostname, parts.port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"redis://127.0.0.1:{self.listener.getsockname()[1]}/0"
        self.marker: bytes | None = None
        self.held = threading.Event()
        self.released = threading.Event()
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def hold(self, marker: bytes) -> None:
        self.marker = marker

    def release(self) -> None:
        self.released.set()

    def close(self) -> None:
        self.released.set()
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream)
            except OSError:  # redis-server stopped (the test is over)
                client.close()
                continue
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, outbound: bool) -> None:
        try:
            while chunk := source.recv(65536):
                if outbound and self._matches(chunk):
                    self.held.set()
                    self.released.wait()
                target.sendall(chunk)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                target.shutdown(socket.SHUT_WR)

    def _matches(self, chunk: bytes) -> bool:
        with self.lock:
            if self.marker is None or self.marker not in chunk:
                return False
            self.marker = None
            return True


@pytest.fixture
def relay(redis_url):
    relay = RedisRelay(redis_url)
    yield relay
    relay.close()


def test_a_socket_closed_while_its_lock_is_taken_leaves_no_lock_or_slot(serve, redis_url, relay):
    # Leases far longer than the wait below: only a release frees the keys in time.
    server = serve("lease-cancel", REDIS_URL=relay.url, AGENT_LEASE_SECONDS="600")
    store = redis.Redis.from_url(redis_url)
    with connect(server.ws_url, additional_headers={"Origin": server.url}) as chat:
        # A first answer, as on any server that has run a while: Redis knows the scripts, and
        # the lock is one EVALSHA (a fresh Redis refuses it unread: NOSCRIPT, then EVAL).
        assert ask(chat)[-1]["type"] == "done"
        wait_until(lambda: store.keys("turns:*") == [], "the first turn is saved")
        relay.hold(hashlib.sha1(ACQUIRE.encode()).hexdigest().encode())  # noqa: S324 (EVALSHA)
        chat.send(json.dumps({"type": "message", "content": "What is pgvector?"}))
        wait_until(relay.held.is_set, "the turn sends its lock script")
    # The server cancels the turn as it hears the close, before Redis has the script.
    wait_until(lambda: open_sockets(server) == 0, "the server heard the socket close")
    relay.release()

    wait_until(lambda: store.keys("turns:*") == [], "the cancelled turn let its slots go")
    # The address and the session can ask again at once.
    with connect(server.ws_url, additional_headers={"Origin": server.url}) as chat:
        assert ask(chat)[-1]["type"] == "done"


def ask(chat) -> list[dict]:
    chat.send(json.dumps({"type": "message", "content": "What is pgvector?"}))
    events = [json.loads(chat.recv(timeout=30))]
    while events[-1]["type"] not in {"done", "error"}:
        events.append(json.loads(chat.recv(timeout=30)))
    return events
