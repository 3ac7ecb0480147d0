"""Redis frozen (SIGSTOP: a paused VM or container, a partition) while a turn ends.

A turn holds AGENT_TOKENS_RESERVE (4,000) when it starts and settles to what it spent at its
end. Ended while Redis did not answer, the settlement was given up: the turn stayed charged its
whole hold on the address's and the site's budget for the day (4,015 for a turn of 15 tokens),
until recovery settled it to its last checkpoint before the outage. Now the settlement is
tried again until Redis answers.
"""

import asyncio
import json
import os
import signal
import time

import pytest
import redis
from channels.db import database_sync_to_async

from agent.holds import HOLD_PREFIX
from agent.models import Turn
from agent.ratelimit import _today
from testing_support.model_server import text_response
from tests.security.clients import ws_events, ws_first, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)


def charged(client: redis.Redis) -> dict[str, int]:
    day = _today()
    keys = {"address": f"tok:ip:127.0.0.1:{day}", "site": f"tok:d:{day}"}
    return {name: int(client.get(key) or 0) for name, key in keys.items()}


async def eventually(check, what: str, seconds: float = 60):
    deadline = time.monotonic() + seconds
    while not (found := await check()):
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.1)
    return found


async def test_a_turn_ended_while_redis_was_frozen_is_charged_what_it_spent(
    redis_url, scripted, serve
):
    gate = asyncio.Event()  # the answer waits until Redis is frozen
    scripted.enqueue(text_response(["Frozen ", "then ", "answered."], usage=(900, 100), gate=gate))
    scripted.enqueue(text_response(["Next."], usage=(90, 10)))
    # A lease far longer than the test: a lock left to expire would still be held at its end.
    env = {"AGENT_LEASE_SECONDS": "300", "SHARED_STATE_SECONDS": "0.5", **model_env(scripted)}
    server = serve("frozen", REDIS_URL=redis_url, **env)
    client = redis.Redis.from_url(redis_url)
    pid = int(client.info("server")["process_id"])
    socket = await ws_open(server)
    await socket.send(json.dumps({"type": "message", "content": "Tell me"}))
    started = await ws_first(socket)
    assert started["type"] == "start"

    os.kill(pid, signal.SIGSTOP)
    try:
        scripted.loop.call_soon_threadsafe(gate.set)
        events = await ws_events(socket)
        # The turn's settlement waits on Redis until its call times out; then it is saved,
        # and its lock's release, sent then, times out too while Redis stays frozen.
        await eventually(
            lambda: asyncio.sleep(0, "is unreachable" in server.output()), "no timeout"
        )
        await eventually(
            database_sync_to_async(lambda: Turn.objects.filter(status="done").exists()), "unsaved"
        )
        await asyncio.sleep(2)  # four times the release's bound (SHARED_STATE_SECONDS)
    finally:
        os.kill(pid, signal.SIGCONT)

    assert events[-1]["type"] == "done"
    saved = await eventually(
        database_sync_to_async(lambda: Turn.objects.exclude(status="running").first()), "unsaved"
    )  # the first turn: the second is asked below
    assert saved.input_tokens + saved.output_tokens == 1000

    async def settled() -> bool:
        return await asyncio.to_thread(charged, client) == {"address": 1000, "site": 1000}

    # Before, 4,000 stayed held (the whole reserve), the record waiting for recovery.
    await eventually(settled, f"still charged {charged(client)}")
    assert not client.exists(HOLD_PREFIX + str(saved.pk))

    # And the conversation is let go once the turn is saved: its lock, left to expire, said
    # `busy` ("answering in another tab") to the next message for the lease's length.
    lock = f"turns:c:{started['conversation_id']}"
    await eventually(lambda: asyncio.to_thread(lambda: not client.exists(lock)), "still held")
    await socket.send(
        json.dumps(
            {"type": "message", "content": "And?", "conversation_id": started["conversation_id"]}
        )
    )
    assert (await ws_events(socket))[-1]["type"] == "done"
    await socket.close()
    client.close()


async def test_a_message_while_redis_is_frozen_is_told_unavailable(redis_url, scripted, serve):
    # Frozen, Redis neither answers nor refuses: each call waits out its bound
    # (SHARED_STATE_SECONDS, 2 s), and the visitor is told, while it is still frozen.
    scripted.enqueue(text_response(["Warm."]))
    server = serve("frozen-ask", REDIS_URL=redis_url, **model_env(scripted))
    client = redis.Redis.from_url(redis_url)
    pid = int(client.info("server")["process_id"])
    socket = await ws_open(server)
    await socket.send(json.dumps({"type": "message", "content": "Warm up"}))
    assert (await ws_events(socket))[-1]["type"] == "done"

    os.kill(pid, signal.SIGSTOP)
    try:
        await socket.send(json.dumps({"type": "message", "content": "Anyone there?"}))
        told = await ws_events(socket, timeout=60)
    finally:
        os.kill(pid, signal.SIGCONT)
    await socket.close()
    client.close()

    assert [(e["type"], e.get("code")) for e in told] == [("error", "unavailable")]


def test_the_shared_states_calls_are_bounded(settings):
    from agent.shared import RedisState

    settings.SHARED_STATE_SECONDS = 1.5

    async def bounds() -> tuple:
        kwargs = RedisState("redis://127.0.0.1:1/0")._client().connection_pool.connection_kwargs
        return kwargs["socket_timeout"], kwargs["socket_connect_timeout"]

    assert asyncio.run(bounds()) == (1.5, 1.5)
