"""Issue 12 point 3: the rules hold across two daphne workers sharing a real Redis."""

import asyncio
import json
import os
import subprocess
import sys
import threading
import time

import httpx
import psycopg
import pytest
import redis
from django.db import connection

from testing_support.live_server import ROOT, database_url
from testing_support.model_server import text_response
from tests.security.clients import same_minute, ws_ask, ws_events, ws_first, ws_open
from tests.security.conftest import PROD_KEY, model_env

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def workers(redis_url, scripted, serve):
    """Two workers on one database and one Redis; the scripted model behind both."""

    def start(**env: str):
        shared = {"REDIS_URL": redis_url, **model_env(scripted), **env}
        return serve("worker-a", **shared), serve("worker-b", **shared)

    return start


def slow(count: int) -> list:
    return [text_response(["word "] * 40, delay=0.05) for _ in range(count)]


def page_cookie(server) -> str:
    with httpx.Client(base_url=server.url) as client:
        return client.get("/").cookies["sessionid"]


async def test_a_session_runs_at_most_two_turns_across_workers(workers, scripted):
    scripted.enqueue(*slow(4))
    a, b = workers()
    key = page_cookie(a)
    sockets = [await ws_open(server, cookie=key) for server in (a, b, a, b)]

    for socket in sockets:
        await socket.send('{"type":"message","content":"go"}')
    first = await asyncio.gather(*(ws_first(socket) for socket in sockets))

    assert sorted(e.get("code", e["type"]) for e in first) == ["busy", "busy", "start", "start"]
    for socket in sockets:
        await socket.close()


async def test_a_conversation_runs_one_turn_across_workers(workers, scripted):
    scripted.enqueue(*slow(2))
    a, b = workers()
    key = page_cookie(a)
    socket = await ws_open(a, cookie=key)
    conversation = (await ws_ask(socket, "first"))[0]["conversation_id"]

    await socket.send(f'{{"type":"message","content":"more","conversation_id":"{conversation}"}}')
    assert (await ws_first(socket))["type"] == "start"
    other = await ws_open(b, cookie=key)
    on_b = await ws_ask(other, "meanwhile", conversation_id=conversation)

    assert [(e["type"], e.get("code")) for e in on_b] == [("error", "busy")]
    assert (await ws_events(socket))[-1]["type"] == "done"
    await socket.close()
    await other.close()


async def test_a_burst_split_over_workers_cannot_overshoot_the_ip_limit(workers, scripted):
    scripted.enqueue(*[text_response(["ok"]) for _ in range(8)])
    a, b = workers(AGENT_MESSAGES_PER_MINUTE_PER_IP="4")

    async def ask(server) -> str:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            response = await client.post(
                "/api/chat", json={"content": "burst"}, headers={"Origin": server.url}
            )
        first = response.text.split("\n\n")[0]
        return "start" if '"type":"start"' in first else "refused"

    same_minute()
    results = await asyncio.gather(*(ask(server) for server in (a, b) * 4))

    assert sorted(results) == ["refused"] * 4 + ["start"] * 4


async def test_the_per_ip_token_budget_is_shared_by_workers(workers, scripted):
    # Each turn spends 2,500 and must hold about 2,000 before its call (tests/security/
    # test_turn_budget.py): two turns fit in 5,000, the third finds no room on either worker.
    scripted.enqueue(*[text_response(["ok"], usage=(2000, 500)) for _ in range(3)])
    a, b = workers(AGENT_TOKENS_PER_IP_PER_DAY="5000")

    ends = []
    for server in (a, b, a):
        socket = await ws_open(server)
        ends.append((await ws_ask(socket, "spend"))[-1].get("code", "done"))
        await socket.close()

    assert ends == ["done", "done", "rate_limited"]


async def test_a_killed_workers_lock_is_taken_off_at_once(workers, scripted):
    """A conversation whose turn's web process was killed answered "busy" on the live one
    until the lock's lease ran out: 20 to 30 s (22 s measured in `make run WORKERS=2`). The
    live process sees the holder's pid is gone (same host, agent.holders) and takes it off."""
    scripted.enqueue(text_response(["word "] * 400, delay=0.05), text_response(["after"]))
    a, b = workers()  # the default 30 s lease: nothing here waits for it
    key = page_cookie(a)
    socket = await ws_open(a, cookie=key)
    await socket.send('{"type":"message","content":"long"}')
    conversation = (await ws_first(socket))["conversation_id"]
    await ws_first(socket)  # streaming

    a.process.kill()  # kill -9: no release, no save
    a.process.wait()
    retry = await ws_open(b, cookie=key)
    right_away = await ws_ask(retry, "anyone?", conversation_id=conversation)

    assert right_away[0]["type"] == "start" and right_away[-1]["type"] == "done"
    assert f"its turn's process {a.pid} is gone" in b.output()
    await retry.close()


def hold_turn_row(conversation: str, seconds: float, locked: threading.Event) -> None:
    """Lock the turn's row (reads still pass) so its final save waits, as a slow save would."""
    url = database_url(connection.settings_dict["NAME"])
    with psycopg.connect(url) as lock:
        lock.execute(
            "SELECT id FROM agent_turn WHERE conversation_id = %s FOR UPDATE", [conversation]
        )
        locked.set()
        time.sleep(seconds)


async def asked_with_its_row_locked(server, key: str, question: str, seconds: float):
    """`question` asked on `server`, its turn's row locked for `seconds` once it has started:
    the socket (its events still to read), the conversation's id and the locking thread."""
    socket = await ws_open(server, cookie=key)
    await socket.send(json.dumps({"type": "message", "content": question}))
    conversation = (await ws_first(socket))["conversation_id"]
    locked = threading.Event()
    holder = threading.Thread(target=hold_turn_row, args=(conversation, seconds, locked))
    holder.start()
    assert locked.wait(10)
    return socket, conversation, holder


async def test_the_next_turn_and_the_transcript_wait_for_a_save_on_another_worker(
    workers, scripted
):
    scripted.enqueue(
        text_response(["first ", "answer"], delay=0.3), text_response(["second answer"])
    )
    a, b = workers()
    key = page_cookie(a)
    socket, conversation, holder = await asked_with_its_row_locked(a, key, "first question", 2.5)

    first = await ws_events(socket)  # done at once; its save waits for the row lock
    async with httpx.AsyncClient(base_url=b.url, cookies={"sessionid": key}, timeout=30) as client:
        transcript = (await client.get(f"/api/conversations/{conversation}")).json()
    other = await ws_open(b, cookie=key)
    second = await ws_ask(other, "second question", conversation_id=conversation)
    holder.join()

    assert first[-1]["type"] == "done"
    saved = [(t["user_message"], t["answer"], t["status"]) for t in transcript["turns"]]
    assert saved == [("first question", "first answer", "done")]
    assert second[-1]["type"] == "done"
    history = [m.get("content") for m in scripted.requests[1]["messages"]]
    assert "first question" in history and "first answer" in history
    await socket.close()
    await other.close()


async def test_a_transcript_does_not_wait_for_a_save_whose_worker_was_killed(
    workers, scripted, redis_url
):
    """A worker killed after a turn's last event, while its save waited, left the conversation
    `saving` in Redis: every load of the transcript (a reload on another worker) waited its
    whole 5 s for a save that would never come, until the lock's lease ran out (30 s)."""
    scripted.enqueue(text_response(["an ", "answer"]))
    a, b = workers()
    key = page_cookie(a)
    socket, conversation, holder = await asked_with_its_row_locked(a, key, "a question", 20)
    assert (await ws_events(socket))[-1]["type"] == "done"  # its save now waits for the row
    lock_key = f"turns:c:{conversation}"
    shared = redis.Redis.from_url(redis_url)
    for _ in range(500):  # moved to `saving` just after the last event was sent
        if (shared.get(lock_key) or b"").startswith(b"saving:"):
            break
        await asyncio.sleep(0.02)
    assert shared.get(lock_key).startswith(b"saving:")

    a.process.kill()  # kill -9 while saving: the save never lands, the lock is never released
    a.process.wait()
    async with httpx.AsyncClient(base_url=b.url, cookies={"sessionid": key}, timeout=30) as client:
        transcript = (await client.get(f"/api/conversations/{conversation}")).json()

    assert shared.get(lock_key) is None  # taken off, not waited for (nor left for its lease)
    assert f"its turn's process {a.pid} is gone (killed?) while saving the turn" in b.output()
    assert [t["user_message"] for t in transcript["turns"]] == ["a question"]
    shared.close()
    holder.join()


def test_several_workers_refuse_to_start_without_shared_state():
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    env.update(
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY=PROD_KEY,
        DJANGO_ALLOWED_HOSTS="blog.example",
        WORKERS="2",
    )
    serve = [sys.executable, "manage.py", "serve", "--no-prepare", "--port", "1"]
    result = subprocess.run(serve, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)

    assert result.returncode == 1
    assert "WORKERS=2 needs REDIS_URL and DATABASE_URL" in result.stderr
    assert "Traceback" not in result.stderr
