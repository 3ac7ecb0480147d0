"""A rolling restart through nginx: SIGTERM one of two web processes while visitors stream.

Every visitor gets a terminal event (`done`, or `error` `unavailable`), never a connection
closed without one, and a visitor who arrives while a worker drains is served by the live one.
Turns are held mid-stream by the scripted model's gate, and before `start` by a row lock on
their conversation, so nothing here depends on timing.
"""

import asyncio
import json
import socket
import threading

import httpx
import pytest
from django.db import connection, transaction

from agent.models import Turn
from testing_support.cluster import LocalCluster
from testing_support.live_server import database_url
from testing_support.model_server import ScriptedOpenAIServer, text_response
from testing_support.waits import blocked_on_a_lock, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

TERMINAL = ("done", "error")


@pytest.fixture
def gate():
    """Holds every answer whose question starts with "hold" before its first word."""
    return asyncio.Event()


@pytest.fixture
def model(gate):
    def script(question: str):
        held = gate if question.startswith("hold") else None
        return text_response(["one ", "two ", "three"], delay=0.01, gate=held)

    with ScriptedOpenAIServer(script_for=script) as server:
        yield server


@pytest.fixture
def cluster(request, model, tmp_path):
    extra = {
        "OPENAI_BASE_URL": model.base_url,
        "OPENAI_API_KEY": "test",
        "AGENT_MODEL": "scripted",
        "AGENT_DRAIN_SECONDS": str(request.param),
    }
    url = database_url(connection.settings_dict["NAME"])
    with LocalCluster(url, tmp_path, extra=extra, workers=2) as running:
        yield running


def gate_open(model: ScriptedOpenAIServer, gate: asyncio.Event) -> None:
    model.loop.call_soon_threadsafe(gate.set)


class Visitor(threading.Thread):
    """One question over SSE, read to its end in a thread; `client` may be a worker's own."""

    def __init__(self, client: httpx.Client, question: str, conversation_id: str = "") -> None:
        super().__init__(daemon=True)
        self.client, self.question, self.conversation_id = client, question, conversation_id
        self.events: list[dict] = []
        self.status: int | None = None
        self.error: httpx.TransportError | None = None  # the response was cut, not ended
        self.started = threading.Event()

    def run(self) -> None:
        body = {"content": self.question}
        if self.conversation_id:
            body["conversation_id"] = self.conversation_id
        try:
            with self.client.stream("POST", "/api/chat", json=body) as reply:
                self.status = reply.status_code
                for line in reply.iter_lines():
                    if line.startswith("data: "):
                        self.events.append(json.loads(line.removeprefix("data: ")))
                        self.started.set()
        except httpx.TransportError as exc:
            self.error = exc  # a cut: `ending` says so if it came before a terminal event
        finally:
            self.started.set()

    @property
    def ending(self) -> str:
        last = self.events[-1] if self.events else {}
        if last.get("type") == "error":
            return f"error {last['code']}"
        return last.get("type") if last.get("type") in TERMINAL else "cut"


def client_for(base_url: str) -> httpx.Client:
    return httpx.Client(base_url=base_url, timeout=60, headers={"Origin": base_url})


def ask(client: httpx.Client, question: str, conversation_id: str = "") -> Visitor:
    visitor = Visitor(client, question, conversation_id)
    visitor.start()
    assert visitor.started.wait(60), "no answer began"
    return visitor


@pytest.mark.parametrize("cluster", [0.5], indirect=True)
def test_sigterm_gives_every_visitor_a_terminal_event(cluster, model, gate):
    victim = cluster.webs[0]
    streaming = [ask(client_for(cluster.url), f"hold {n}") for n in range(4)]  # 2 per worker

    with transaction.atomic(), connection.cursor() as cursor:
        # A new conversation waits for this lock: a visitor whose turn has not sent `start`.
        cursor.execute("LOCK TABLE agent_conversation IN SHARE ROW EXCLUSIVE MODE")
        before_start = Visitor(client_for(victim.url), "hold, not started")
        before_start.start()
        wait_until(blocked_on_a_lock, "the turn is waiting at its start")
        cluster.terminate(0)
        # Told, or cut (the bug this guards against): either way before the lock is let go.
        wait_until(lambda: before_start.events or not before_start.is_alive(), "an ending")
    gate_open(model, gate)
    for visitor in [*streaming, before_start]:
        visitor.join(60)

    assert victim.process.wait(timeout=60) == 0
    endings = [visitor.ending for visitor in [*streaming, before_start]]
    assert "cut" not in endings and set(endings) == {"done", "error unavailable"}
    assert before_start.ending == "error unavailable" and before_start.status == 200
    # After `unavailable`, the response ends as HTTP says it must (its last chunk), not with a
    # closed connection that EventSource or fetch reports as a network error.
    assert [visitor.error for visitor in [*streaming, before_start]] == [None] * 5


@pytest.mark.parametrize("cluster", [60], indirect=True)
def test_a_visitor_arriving_during_a_drain_is_served_by_the_live_worker(cluster, model, gate):
    draining, live = cluster.webs
    held = ask(client_for(draining.url), "hold the drain open")  # finishes only at the gate
    kept_alive = client_for(draining.url)
    assert kept_alive.get("/healthz").status_code == 200  # a connection opened before SIGTERM

    cluster.terminate(0)
    wait_until(lambda: kept_alive.get("/readyz").status_code == 503, "the worker is draining")
    # A request on a connection opened before the drain still reaches the draining worker:
    # 503, before anything starts, which nginx retries on the next worker.
    refused = kept_alive.post("/api/chat", json={"content": "too late"})
    assert refused.status_code == 503
    arriving = ask(client_for(cluster.url), "I just arrived")
    arriving.join(60)

    assert arriving.ending == "done"
    turn = Turn.objects.get(user_message="I just arrived")
    assert int(turn.worker.split(":")[1]) == live.pid
    assert draining.process.poll() is None  # still draining: the held turn keeps it open
    gate_open(model, gate)
    held.join(60)
    assert held.ending == "done"  # finished within AGENT_DRAIN_SECONDS
    assert draining.process.wait(timeout=60) == 0


class Unanswering(threading.Thread):
    """A stand-in web process that reads each chat request, then closes (`close`: killed before
    its first byte) or answers 503 (`503`: draining); anything else gets an empty 200."""

    def __init__(self, how: str) -> None:
        super().__init__(daemon=True)
        self.how, self.requests = how, 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]

    def run(self) -> None:
        while True:
            try:
                peer, _ = self.listener.accept()
            except OSError:
                return  # closed at the end of the test
            with peer:
                if b"POST /api/chat" not in peer.recv(65536):
                    peer.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")  # /healthz
                    continue
                self.requests += 1
                if self.how == "503":
                    peer.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")


@pytest.mark.parametrize("how", ["close", "503"])
def test_nginx_retries_a_chat_post_that_a_worker_never_answered(model, tmp_path, how):
    stand_in = Unanswering(how)
    stand_in.start()
    extra = {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "t", "AGENT_MODEL": "s"}
    url = database_url(connection.settings_dict["NAME"])
    try:
        with LocalCluster(
            url, tmp_path, extra=extra, workers=1, other_upstreams=(stand_in.port,)
        ) as cluster:
            # Sequential questions: nginx takes the two upstreams in turn, so one reaches the
            # stand-in; it is passed on to the web process, which answers it.
            visitors = [ask(client_for(cluster.url), f"question {n}") for n in range(4)]
            for visitor in visitors:
                visitor.join(60)
    finally:
        stand_in.listener.close()

    assert stand_in.requests >= 1
    assert [visitor.ending for visitor in visitors] == ["done"] * 4
