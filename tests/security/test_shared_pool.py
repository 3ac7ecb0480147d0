"""The shared state's Redis pool under a burst: more calls at once than it has connections."""

import asyncio

from agent.shared import POOL_SIZE, RedisState


async def test_a_burst_larger_than_the_pool_waits_for_connections(redis_url):
    state = RedisState(redis_url)
    burst = 3 * POOL_SIZE  # a worker taking over the other's visitors at once

    overs = await asyncio.gather(*(state.hit([(f"burst:{n}", 10)], 60) for n in range(burst)))

    assert [hit.over for hit in overs] == [0] * burst
