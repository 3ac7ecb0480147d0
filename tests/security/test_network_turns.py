"""The /64s of one IPv6 /48 share its running-turn slots, as they share its other limits.

AGENT_TURNS_PER_IP counted the /64 alone, so each of a /48's 65,536 /64s could run its six
answers at once (each a model stream, its tokens held, a database row): five sockets from five
/64s of one /48 all started with a cap of three. The /48 now has AGENT_TURNS_PER_NETWORK (four
addresses' worth), on one process and across workers (the same Lua script takes every slot).
"""

import pytest
import redis

from testing_support.model_server import text_response
from testing_support.waits import wait_until
from tests.security.clients import ws_open
from tests.security.conftest import model_env
from tests.security.test_address_turns import ask_at_once

pytestmark = pytest.mark.django_db(transaction=True)

WALKED = [{"X-Forwarded-For": f"2001:db8:e:{i:x}::1"} for i in range(1, 6)]  # one /48
ANOTHER_48 = {"X-Forwarded-For": "2001:db8:f:1::1"}
LIMITS = {"DJANGO_TRUSTED_PROXIES": "1", "AGENT_TURNS_PER_IP": "3", "AGENT_TURNS_PER_NETWORK": "3"}


def held_answers(count: int) -> list:
    return [text_response(["word "], hold=True) for _ in range(count)]


async def test_the_64s_of_one_48_share_its_turn_slots(serve, scripted):
    scripted.enqueue(*held_answers(4))
    server = serve("network-turns", **LIMITS, **model_env(scripted))
    sockets = [await ws_open(server, headers=headers) for headers in WALKED]

    kinds = await ask_at_once(sockets)
    other = await ws_open(server, headers=ANOTHER_48)
    elsewhere = await ask_at_once([other])

    assert kinds == ["busy", "busy", "start", "start", "start"]  # before: five starts
    assert elsewhere == ["start"]
    for socket in [*sockets, other]:
        await socket.close()


async def test_the_48s_slots_hold_across_workers_and_are_given_back(serve, scripted, redis_url):
    scripted.enqueue(*held_answers(3))
    a = serve("network-turns-a", REDIS_URL=redis_url, **LIMITS, **model_env(scripted))
    b = serve("network-turns-b", REDIS_URL=redis_url, **LIMITS, **model_env(scripted))
    store = redis.Redis.from_url(redis_url)
    servers = [a, b, a, b, a]
    sockets = [await ws_open(s, headers=h) for s, h in zip(servers, WALKED, strict=True)]

    kinds = await ask_at_once(sockets)

    assert kinds == ["busy", "busy", "start", "start", "start"]
    (slots,) = store.keys("turns:net:*")
    assert store.zcard(slots) == 3
    for socket in sockets:
        await socket.close()
    wait_until(lambda: store.zcard(slots) == 0, "the closed turns gave the /48's slots back")
