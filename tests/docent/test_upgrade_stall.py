"""WebSocket upgrades through nginx while the web processes are too slow to accept them.

A chat socket is accepted only after Channels' auth middleware has loaded the visitor's
session. While this test holds the session table locked, every upgrade that carries a session
cookie waits in both web processes, as it does in a process starved of CPU, with real parts:
nginx, two daphne web processes, redis-server, PostgreSQL. What the visitor gets is read from
its client.
"""

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.conf import settings
from django.db import connection, transaction
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from agent.models import Turn
from testing_support.cluster import LocalCluster
from testing_support.live_server import database_url
from testing_support.model_server import ScriptedOpenAIServer, text_response

pytestmark = pytest.mark.django_db(transaction=True)

COOKIE = {"Cookie": f"{settings.SESSION_COOKIE_NAME}={'s' * 32}"}  # a key of the site's shape


@pytest.fixture
def model():
    with ScriptedOpenAIServer(script_for=lambda _: text_response(["an ", "answer"])) as server:
        yield server


def start_cluster(model, tmp_path, **extra: str) -> LocalCluster:
    env = {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "t", "AGENT_MODEL": "s"}
    url = database_url(connection.settings_dict["NAME"])
    return LocalCluster(url, tmp_path, extra=env | extra, workers=2)


@contextmanager
def sessions_locked() -> Iterator[None]:
    """Session lookups wait until the block ends (the lock goes with the transaction)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("LOCK TABLE django_session IN ACCESS EXCLUSIVE MODE")
        yield


def open_socket(cluster: LocalCluster):
    return connect(cluster.ws_url, origin=cluster.url, open_timeout=60, additional_headers=COOKIE)


def ask(cluster: LocalCluster, question: str) -> list[dict]:
    """Open a chat socket through nginx, ask, and read the turn to its last event."""
    with open_socket(cluster) as socket:
        socket.send(json.dumps({"type": "message", "content": question}))
        events = [json.loads(socket.recv(timeout=60))]
        while events[-1]["type"] not in ("done", "error"):
            events.append(json.loads(socket.recv(timeout=60)))
    return events


def upgrade_status(cluster: LocalCluster) -> int:
    try:
        with open_socket(cluster):
            return 101
    except InvalidStatus as refused:
        return refused.response.status_code


def warm_up(cluster: LocalCluster) -> None:
    """A web process's first upgrade is slow (first connections, imports): get each process
    past it before a test reads what an upgrade gets."""
    served = 0
    while served < 4:
        if upgrade_status(cluster) == 101:
            served += 1
        else:
            time.sleep(0.2)  # a cold process reset it: give it a moment, not a flood


def test_a_stall_both_workers_reset_does_not_refuse_the_next_visitor(model, tmp_path):
    # A one-second accept time, so that a stall outlasts it in both processes quickly.
    with start_cluster(model, tmp_path, HTTP_WEBSOCKET_ACCEPT_SECONDS="1") as cluster:
        warm_up(cluster)
        with sessions_locked():
            # Neither process accepts within its second: each resets the upgrade, nginx
            # tries the other, and this visitor gets a 502 (the panel reconnects).
            assert upgrade_status(cluster) == 502

        # Both processes answer again at once; nginx must not hold a reset against them.
        events = ask(cluster, "after the stall")

    assert [events[0]["type"], events[-1]["type"]] == ["start", "done"]
    assert Turn.objects.filter(user_message="after the stall").count() == 1


class Visitor(threading.Thread):
    def __init__(self, cluster: LocalCluster, question: str) -> None:
        super().__init__(daemon=True)
        self.cluster, self.question = cluster, question
        self.events: list[dict] = []
        self.refused: int | None = None

    def run(self) -> None:
        try:
            self.events = ask(self.cluster, self.question)
        except InvalidStatus as refused:
            self.refused = refused.response.status_code


def test_upgrades_held_longer_than_twenty_seconds_are_served_once_the_stall_ends(model, tmp_path):
    with start_cluster(model, tmp_path) as cluster:  # the default accept time
        warm_up(cluster)
        visitors = [Visitor(cluster, f"held question {n}") for n in range(2)]
        with sessions_locked():
            for visitor in visitors:
                visitor.start()
            # The stall: longer than two of daphne's former 10 s handshake timeouts, so that
            # nginx's second try would be reset too.
            time.sleep(21)
        for visitor in visitors:
            visitor.join(60)

    assert [v.refused for v in visitors] == [None, None]
    assert [v.events[-1]["type"] for v in visitors] == ["done", "done"]
    for visitor in visitors:  # one turn per question: nothing ran twice
        assert Turn.objects.filter(user_message=visitor.question).count() == 1
