"""/readyz is public (nginx passes it on, and a Kubernetes probe needs no credentials).

Each request opened a Redis connection of its own and closed it: a flood of /readyz was a
flood of new connections to the site's Redis (each left in TIME_WAIT on the web host for a
minute), on top of the database check every page makes.
"""

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
