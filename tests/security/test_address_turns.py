"""One address runs at most AGENT_TURNS_PER_IP turns at once, whatever its sessions.

A session is a cookie, and a client without one is handed a new one on every socket: each had
its own AGENT_TURNS_PER_SESSION (2) slots, so one address opening a socket per question ran as
many answers at once as it liked (each a model stream, its tokens held, a database row).
"""

import asyncio

import pytest
import redis

from testing_support.model_server import text_response
from testing_support.waits import wait_until
from tests.ops.prom import scrape, value
from tests.security.clients import ws_first, ws_open
from tests.security.conftest import model_env

pytestmark = pytest.mark.django_db(transaction=True)

CROWD = {"X-Forwarded-For": "203.0.113.9"}  # one address behind the trusted proxy
SOMEONE_ELSE = {"X-Forwarded-For": "198.51.100.4"}


def held_answers(count: int) -> list:
    """Answers that stop after their first word until the visitor leaves."""
    return [text_response(["word "], hold=True) for _ in range(count)]


async def ask_at_once(sockets) -> list[str]:
    return sorted(event.get("code", event["type"]) for event in await first_events(sockets))


async def first_events(sockets) -> list[dict]:
    for socket in sockets:
        await socket.send('{"type":"message","content":"go"}')
    return await asyncio.gather(*(ws_first(socket) for socket in sockets))


async def test_an_address_with_a_session_per_socket_runs_at_most_its_turns(serve, scripted):
    scripted.enqueue(*held_answers(4))
    server = serve(
        "address-turns",
        DJANGO_TRUSTED_PROXIES="1",
        AGENT_TURNS_PER_IP="3",
        **model_env(scripted),
    )
    sockets = [await ws_open(server, headers=CROWD) for _ in range(5)]  # five new sessions

    first = await first_events(sockets)
    kinds = sorted(event.get("code", event["type"]) for event in first)
    other = await ws_open(server, headers=SOMEONE_ELSE)
    elsewhere = await ask_at_once([other])

    assert kinds == ["busy", "busy", "start", "start", "start"]
    # Said as the network's, not this chat's: the panel words it so (not "another tab").
    assert [e["reason"] for e in first if e.get("code") == "busy"] == ["network", "network"]
    assert elsewhere == ["start"]  # another address has slots of its own
    # Counted apart from a second tab's "busy": an office behind one address is worth seeing.
    samples = scrape(server.url)
    assert value(samples, "docent_turns_refused_total", reason="address") == 2
    assert value(samples, "docent_turns_refused_total", reason="busy") == 0
    for socket in [*sockets, other]:
        await socket.close()


async def test_the_cap_holds_across_workers_and_a_finished_turn_frees_its_slot(
    serve, scripted, redis_url
):
    scripted.enqueue(*held_answers(3))
    shared = {"REDIS_URL": redis_url, "DJANGO_TRUSTED_PROXIES": "1", "AGENT_TURNS_PER_IP": "2"}
    a = serve("address-turns-a", **shared, **model_env(scripted))
    b = serve("address-turns-b", **shared, **model_env(scripted))
    store = redis.Redis.from_url(redis_url)
    sockets = [await ws_open(server, headers=CROWD) for server in (a, b, a, b)]

    kinds = await ask_at_once(sockets)

    assert kinds == ["busy", "busy", "start", "start"]
    (slots,) = store.keys("turns:ip:*")
    assert store.zcard(slots) == 2
    # The visitors leave: the cancelled turns give their slots back, whichever worker ran them.
    for socket in sockets:
        await socket.close()
    wait_until(lambda: store.zcard(slots) == 0, "the closed turns gave their slots back")
    again = await ws_open(b, headers=CROWD)
    assert await ask_at_once([again]) == ["start"]
    await again.close()
