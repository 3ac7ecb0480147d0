"""A socket closed right after its message must not keep the turn's budget hold or its lock.

A turn holds AGENT_TOKENS_RESERVE on the address's and the site's daily budgets before its row
is written. Closed while the turn took its conversation's lock or sent `start` (after its row,
before the loop), the turn ended without its settlement: the hold stayed spent for the day
(about one message in four of a send-and-close loop, from one address, used up the site's
budget a few thousand tokens at a time), its lock and session slot were renewed for ever by a
heartbeat nobody stopped, and its row stayed `running`.
"""

import json
import socket

import pytest
import redis
from django.db import connection, transaction
from websockets.sync.client import connect

from agent.models import Turn
from testing_support.waits import blocked_on_a_lock, open_sockets, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

LOCK = "LOCK TABLE agent_conversation IN SHARE ROW EXCLUSIVE MODE"


def tokens_held(client: redis.Redis, pattern: str) -> int:
    return sum(int(client.get(key) or 0) for key in client.keys(pattern))


def test_a_socket_closed_as_its_turn_takes_its_lock_gives_back_the_hold(serve, redis_url):
    server = serve("early-close", REDIS_URL=redis_url)
    store = redis.Redis.from_url(redis_url)
    with connect(server.ws_url, additional_headers={"Origin": server.url}) as socket:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(LOCK)  # the new conversation's INSERT waits: the hold is taken
            socket.send(json.dumps({"type": "message", "content": "What is pgvector?"}))
            wait_until(blocked_on_a_lock, "the turn waits to write its conversation")
            # Redis stops taking writes: once its row is written, the turn waits on its lock.
            store.execute_command("CLIENT", "PAUSE", "60000", "WRITE")
        try:
            wait_until(lambda: Turn.objects.filter(status="running").exists(), "the turn's row")
            socket.close()
            wait_until(lambda: open_sockets(server) == 0, "the server heard the socket close")
        finally:
            store.execute_command("CLIENT", "UNPAUSE")

    wait_until(lambda: not Turn.objects.filter(status="running").exists(), "the turn ended")
    turn = Turn.objects.get()
    assert turn.status == "cancelled"
    wait_until(lambda: not store.keys("turns:*"), "its lock and session slot are let go")
    assert tokens_held(store, "tok:ip:*") == 0  # the offline model spent nothing
    assert tokens_held(store, "tok:d:*") == 0


def test_a_stream_closed_while_its_turn_row_is_written_ends_the_turn_cancelled(serve, redis_url):
    # Over SSE the close reaches the turn while the database thread writes its row (the
    # WebSocket's disconnect waits for that thread). The thread cannot be stopped: the turn gave
    # up at once and the row written a moment later stayed `running` (no recovery runs here).
    server = serve("close-in-prepare", REDIS_URL=redis_url)
    store = redis.Redis.from_url(redis_url)
    body = json.dumps({"type": "message", "content": "What is pgvector?"}).encode()
    head = (
        f"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nOrigin: {server.url}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(LOCK)  # the thread waits inside turn_prepare, the lease taken
        # A raw socket: daphne sends the stream's headers with its first event, after the row.
        with socket.create_connection(("127.0.0.1", server.port)) as stream:
            stream.sendall(head.encode() + body)
            wait_until(blocked_on_a_lock, "the turn waits to write its conversation")
            assert store.keys("turns:*")
        # The stream is closed: the cancelled turn lets its lease go when it ends.
        wait_until(lambda: not store.keys("turns:*"), "the server ended the turn")
    # The lock is gone: the thread writes the conversation and the `running` turn.

    wait_until(lambda: Turn.objects.exists(), "the turn's row")
    wait_until(lambda: not Turn.objects.filter(status="running").exists(), "the turn ended")
    assert Turn.objects.get().status == "cancelled"
