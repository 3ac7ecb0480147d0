"""The cluster on real engines: redis-server, two daphne web processes and nginx in front.

The model is the scripted HTTP server, slow enough that a turn is mid-stream when a worker is
killed or stopped; what the database holds is read from this test's own connection.
"""

import asyncio
import contextlib
import json
import threading
import time

import httpx
import pytest
from django.db import connection
from django.test import override_settings

from agent.models import Turn
from agent.tasks import turns_recover_periodic
from testing_support.cluster import LocalCluster
from testing_support.live_server import database_url
from testing_support.model_server import ScriptedOpenAIServer, text_response
from testing_support.waits import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

PIECES = [f"word{n} " for n in range(80)]  # 80 deltas, 0.1 s apart: an 8 s answer


@pytest.fixture
def model():
    with ScriptedOpenAIServer(script_for=lambda _: text_response(PIECES, delay=0.1)) as server:
        yield server


@pytest.fixture
def cluster(model, tmp_path):
    extra = {
        "OPENAI_BASE_URL": model.base_url,
        "OPENAI_API_KEY": "test",
        "AGENT_MODEL": "scripted",
        "AGENT_CHECKPOINT_SECONDS": "0.3",
        "AGENT_DRAIN_SECONDS": "0.5",
        "AGENT_TEXT_FRAME_MS": "0",
    }
    url = database_url(connection.settings_dict["NAME"])
    with LocalCluster(url, tmp_path, extra=extra, workers=2) as running:
        yield running


class SseTurn(threading.Thread):
    """One visitor's question over SSE through nginx, read to its end in a thread."""

    def __init__(self, base_url: str, question: str) -> None:
        super().__init__(daemon=True)
        self.base_url, self.question = base_url, question
        self.events: list[dict] = []
        self.texts = threading.Event()

    def run(self) -> None:
        try:
            with (
                httpx.Client(base_url=self.base_url, timeout=60) as client,
                client.stream(
                    "POST",
                    "/api/chat",
                    json={"content": self.question},
                    headers={"Origin": self.base_url.rstrip("/")},
                ) as reply,
            ):
                for line in reply.iter_lines():
                    if line.startswith("data: "):
                        self.events.append(json.loads(line.removeprefix("data: ")))
                        if sum(e["type"] == "text" for e in self.events) >= 5:
                            self.texts.set()
        except httpx.TransportError:
            self.cut = True  # the worker died mid-stream (kill -9)

    cut = False

    @property
    def text(self) -> str:
        return "".join(e["content"] for e in self.events if e["type"] == "text")


def running_turn(question: str, timeout: float = 30) -> Turn:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        turn = Turn.objects.filter(user_message=question).first()
        if turn is not None:
            return turn
        time.sleep(0.1)
    raise AssertionError(f"no turn recorded for {question!r}")


def _refreshed(turn: Turn) -> Turn:
    turn.refresh_from_db()
    return turn


def worker_pid(turn: Turn) -> int:
    return int(turn.worker.split(":")[1])


def start_turn(cluster: LocalCluster, question: str) -> tuple[SseTurn, Turn]:
    client = SseTurn(cluster.url, question)
    client.start()
    assert client.texts.wait(30), "the answer did not start streaming"
    return client, running_turn(question)


def test_least_conn_sends_concurrent_streams_to_different_workers(cluster):
    (first, first_turn), (second, second_turn) = (
        start_turn(cluster, "first question"),
        start_turn(cluster, "second question"),
    )

    assert worker_pid(first_turn) != worker_pid(second_turn)
    assert {worker_pid(first_turn), worker_pid(second_turn)} == {w.pid for w in cluster.webs}
    first.join(30), second.join(30)
    assert first.events[-1]["type"] == second.events[-1]["type"] == "done"


def test_websockets_through_nginx_are_upgraded_and_spread(cluster):
    websockets = pytest.importorskip("websockets.sync.client")
    with contextlib.ExitStack() as opened:  # closed on the way out, as the client asks
        connect = websockets.connect
        sockets = [opened.enter_context(connect(cluster.ws_url, origin=cluster.url)) for _ in "ab"]
        for number, socket in enumerate(sockets):
            socket.send(json.dumps({"type": "message", "content": f"ws question {number}"}))
            assert json.loads(socket.recv(timeout=30))["type"] == "start"
        turns = [running_turn(f"ws question {number}") for number in range(2)]
        assert len({worker_pid(turn) for turn in turns}) == 2


def test_kill_9_mid_turn_keeps_the_question_and_text_then_recovery_marks_it(cluster):
    client, turn = start_turn(cluster, "what survives a crash?")
    # A checkpoint (every 0.3 s) has saved some text: a second's sleep stood in for it, short
    # of one on a loaded machine.
    wait_until(lambda: _refreshed(turn).answer.startswith("word0 word1 "), "a checkpoint")

    cluster.kill(cluster.web_by_pid(worker_pid(turn)))
    client.join(30)
    assert client.cut

    turn.refresh_from_db()
    assert (turn.status, turn.user_message) == ("running", "what survives a crash?")
    assert turn.answer.startswith("word0 word1 ")  # checkpointed before the crash
    assert client.text.startswith(turn.answer)
    with override_settings(AGENT_LEASE_SECONDS=1):
        time.sleep(1.5)
        # The queued job's body, run as the worker runs it.
        asyncio.run(turns_recover_periodic(timestamp=0))
    turn.refresh_from_db()
    assert turn.status == "interrupted" and turn.answer.startswith("word0 word1 ")


def test_sigterm_ends_a_running_stream_with_unavailable_and_saves_it(cluster):
    client, turn = start_turn(cluster, "will you finish?")
    index = cluster.web_by_pid(worker_pid(turn))

    cluster.terminate(index)
    client.join(30)
    assert cluster.webs[index].process.wait(timeout=30) == 0

    assert client.events[-1]["type"] == "error"
    assert client.events[-1]["code"] == "unavailable"
    turn.refresh_from_db()
    assert turn.status == "interrupted" and client.text.startswith(turn.answer) and turn.answer


def test_readyz_fails_while_draining(cluster, model):
    client, turn = start_turn(cluster, "drain me")
    web = cluster.webs[cluster.web_by_pid(worker_pid(turn))]
    assert httpx.get(web.url + "/readyz").status_code == 200

    cluster.terminate(cluster.webs.index(web))
    # Until the process has handled its SIGTERM it is ready as before: a fixed 0.2 s stood in
    # for that, and a loaded machine may not run it that soon.
    deadline = time.monotonic() + 30
    while True:
        try:
            reply = httpx.get(web.url + "/readyz", timeout=5)
        except httpx.TransportError:
            reply = None  # already gone: not ready either
            break
        if reply.status_code != 200 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if reply is not None:
        assert reply.status_code == 503 and reply.json()["accepting_turns"] is False
    client.join(30)


def test_sigterm_ends_a_websocket_turn_with_unavailable(cluster):
    websockets = pytest.importorskip("websockets.sync.client")
    with websockets.connect(cluster.ws_url, origin=cluster.url) as socket:
        socket.send(json.dumps({"type": "message", "content": "ws, will you finish?"}))
        events = [json.loads(socket.recv(timeout=30)) for _ in range(4)]  # start, some text
        turn = running_turn("ws, will you finish?")

        cluster.terminate(cluster.web_by_pid(worker_pid(turn)))
        while events[-1]["type"] not in ("done", "error"):
            events.append(json.loads(socket.recv(timeout=30)))

    assert events[0]["type"] == "start"
    assert (events[-1]["type"], events[-1]["code"]) == ("error", "unavailable")
