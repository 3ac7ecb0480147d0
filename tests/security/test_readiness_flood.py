"""/readyz is public (nginx passes it on, and a Kubernetes probe needs no credentials).

Each request opened a Redis connection of its own and closed it: a flood of /readyz was a
flood of new connections to the site's Redis (each left in TIME_WAIT on the web host for a
minute), on top of the database check every page makes.
"""

import asyncio
import time

import httpx
import pytest
import redis

pytestmark = pytest.mark.django_db(transaction=True)


def connections_received(store: redis.Redis) -> int:
    return int(store.info("stats")["total_connections_received"])


def test_a_flood_of_readiness_checks_opens_no_redis_connection_each(serve, redis_url):
    server = serve("readyz-flood", REDIS_URL=redis_url)
    store = redis.Redis.from_url(redis_url)
    with httpx.Client(base_url=server.url) as client:
        assert client.get("/readyz").json()["redis"] is True  # the process's pool is open
        before = connections_received(store)
        answers = [client.get("/readyz").status_code for _ in range(40)]

    assert answers == [200] * 40
    # The test's own INFO call is one connection; the checks reuse the process's pool.
    assert connections_received(store) - before <= 2


async def test_a_readiness_check_does_not_queue_behind_one_clients_burst(serve):
    # /readyz waited in the per-address request queue: behind a burst of slow requests from
    # the same address (a proxy's, or a prober's own) it took 15 s, long past a probe's timeout,
    # and a busy but healthy worker was taken out of rotation.
    server = serve(
        "readyz-queue",
        HTTP_REQUESTS_IN_FLIGHT="1",
        HTTP_REQUESTS_IN_FLIGHT_PER_IP="1",
        SEARCH_REQUESTS_PER_MINUTE_PER_IP="10000",
    )
    slow = {"q": "向量检索和全文检索怎么融合排序" * 30}  # each embeds for a fraction of a second
    async with httpx.AsyncClient(base_url=server.url, timeout=120) as client:
        assert (await client.get("/api/search", params={"q": "warm"})).status_code == 200
        burst = [asyncio.create_task(client.get("/api/search", params=slow)) for _ in range(12)]
        await asyncio.sleep(0.5)  # the burst is queued (one runs at a time)
        ready = await client.get("/readyz")
        still_queued = sum(not task.done() for task in burst)
        answers = await asyncio.gather(*burst)

    assert ready.status_code == 200
    assert still_queued >= 6  # it was answered ahead of the burst, not after it
    assert [answer.status_code for answer in answers] == [200] * 12


async def test_concurrent_readiness_checks_share_one_check_in_flight(monkeypatch):
    # A flood of probes was a flood of database checks, each in a thread with its connection.
    from docent import health

    calls = 0

    def database_ok() -> bool:
        nonlocal calls
        calls += 1
        time.sleep(0.2)  # a slow database: every probe arrives while the check runs
        return True

    monkeypatch.setattr(health, "_database_ok", database_ok)
    answers = await asyncio.gather(*(health.readiness() for _ in range(50)))
    after = await health.readiness()  # a later probe checks again: nothing is cached

    assert calls == 2
    assert all(answer["database"] for answer in [*answers, after])
