"""Token budgets on a real Redis: a hold the visitor never waited for is given back."""

import asyncio
import time
from urllib.parse import urlsplit

import pytest
import redis

from agent import ratelimit
from agent.shared import state, state_reset
from tests.security.conftest import redis_url  # noqa: F401  (a real redis-server)

ADDRESS = "203.0.113.5"


class StalledReplies:
    """A TCP relay to Redis whose replies wait while `flowing` is clear (commands go through)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.flowing = asyncio.Event()
        self.flowing.set()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def _relay(self, reader, writer) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.port)
        await asyncio.gather(
            self._pipe(reader, upstream_writer, gated=False),
            self._pipe(upstream_reader, writer, gated=True),
            return_exceptions=True,
        )

    async def _pipe(self, reader, writer, *, gated: bool) -> None:
        try:
            while data := await reader.read(65536):
                if gated:
                    await self.flowing.wait()
                writer.write(data)
                await writer.drain()
        finally:
            writer.close()


def tokens_held(client: redis.Redis) -> dict[str, int]:
    return {key.decode(): int(client.get(key) or 0) for key in client.keys("tok:*")}


@pytest.mark.django_db
async def test_a_reserve_cancelled_before_its_answer_arrives_gives_back_its_hold(settings, request):
    """The visitor's socket closed while the turn's hold was on its way: Redis ran the script
    and took the tokens, the turn never read the answer (the client drops its connection on a
    cancel), and the hold stayed spent for the day on the address's budget and the site's."""
    url = request.getfixturevalue("redis_url")
    store = redis.Redis.from_url(url)
    relay = StalledReplies(urlsplit(url).port)
    settings.REDIS_URL = f"redis://127.0.0.1:{await relay.start()}/0"
    state_reset()
    # Connected and the script loaded: those answers need the relay too.
    await state().reserve([("warm-up", 1, 60)], 0)
    await state().clock()  # the day a turn counts on, read by Redis's clock
    relay.flowing.clear()
    reserve = asyncio.create_task(ratelimit.budget_reserve(conversation_id=None, client_ip=ADDRESS))
    deadline = time.monotonic() + 30  # only so that a broken run cannot hang
    while not tokens_held(store):  # the script ran; its answer waits in the relay
        assert time.monotonic() < deadline, "the reserve never reached Redis"
        await asyncio.sleep(0.01)
    reserve.cancel()
    relay.flowing.set()
    await asyncio.gather(reserve, return_exceptions=True)

    assert reserve.cancelled()
    held = tokens_held(store)
    assert held == {}  # the address's day and the site's given back (a key at 0 is deleted)
    relay.server.close()
    state_reset()


async def test_a_turn_running_at_midnight_settles_on_the_day_it_began(settings):
    """A turn that began at 23:59 held its tokens on that day's budgets and was settled at
    00:00 on the next day's: its unspent hold came off the new day (a negative count, more
    room for the address and the site) and the whole hold stayed spent on the old one."""
    state_reset()
    began = "2026-12-01"
    budget = ratelimit.TurnBudget(conversation_id=None, client_ip=ADDRESS, held=0, day=began)
    assert await budget.cover(4000)  # held on the day it began, like its first hold

    await ratelimit.budget_settle(budget=budget, conversation_id="c-1", tokens=150)

    days = {}
    for key, value in state().counters.items():
        if key.startswith(("tok:ip:", "tok:d:")):
            days[key.rsplit(":", 1)[1]] = days.get(key.rsplit(":", 1)[1], []) + [value[0]]
    assert days == {began: [150, 150]}  # the address's and the site's, on that day only
    state_reset()


async def test_the_64s_of_one_ipv6_48_share_a_daily_budget(settings):
    """Each /64 is an address with a budget of its own, and one connection is often given a
    /48 of them: ten spent the whole site's day. The /48 has a budget too."""
    state_reset()
    settings.REDIS_URL = ""
    settings.AGENT_TOKENS_PER_IP_PER_DAY = 10**9
    settings.AGENT_TOKENS_PER_NETWORK_PER_DAY = 6000
    settings.AGENT_TOKENS_RESERVE = 4000

    first = await ratelimit.budget_reserve(conversation_id=None, client_ip="2001:db8:9:1::1")
    await ratelimit.budget_settle(budget=first, conversation_id="c-1", tokens=6000)
    same_48 = await ratelimit.budget_reserve(conversation_id=None, client_ip="2001:db8:9:2::1")
    other_48 = await ratelimit.budget_reserve(conversation_id=None, client_ip="2001:db8:a:1::1")
    ipv4 = await ratelimit.budget_reserve(conversation_id=None, client_ip="192.0.2.9")

    assert isinstance(same_48, ratelimit.Refusal) and same_48.reason == "network_budget"
    assert isinstance(other_48, ratelimit.TurnBudget) and isinstance(ipv4, ratelimit.TurnBudget)
    assert not [key for key in state().counters if key.startswith("tok:net:192")]
    state_reset()


async def test_a_day_spent_refuses_until_the_shared_clocks_midnight(settings, monkeypatch):
    """The day's key and its refusal's wait come from the shared state's clock (Redis's), a
    minute before its midnight here: the wait was counted on this process's own clock."""
    state_reset()
    settings.AGENT_TOKENS_PER_DAY = 100
    settings.AGENT_TOKENS_RESERVE = 100
    midnight = (time.time() // 86400 + 3) * 86400  # a day far from this process's own

    async def shared_clock() -> float:
        return midnight - 60

    monkeypatch.setattr(state(), "clock", shared_clock)
    day = time.strftime("%Y-%m-%d", time.gmtime(midnight - 60))
    first = await ratelimit.budget_reserve(conversation_id=None, client_ip=ADDRESS)
    refused = await ratelimit.budget_reserve(conversation_id=None, client_ip="198.51.100.7")

    assert isinstance(first, ratelimit.TurnBudget) and first.day == day
    assert refused.reason == "daily_budget" and refused.retry_after == 60
    state_reset()


async def test_a_running_turn_refused_waits_until_the_shared_clocks_midnight(settings, monkeypatch):
    """A turn stopped for want of the day's room mid-answer is told the same wait as one
    refused at its start: it was counted on this process's own clock."""
    state_reset()
    settings.AGENT_TOKENS_PER_DAY = 300
    settings.AGENT_TOKENS_RESERVE = 100
    midnight = (time.time() // 86400 + 3) * 86400

    async def shared_clock() -> float:
        return midnight - 90

    monkeypatch.setattr(state(), "clock", shared_clock)
    budget = await ratelimit.budget_reserve(conversation_id=None, client_ip=ADDRESS)

    assert isinstance(budget, ratelimit.TurnBudget)
    assert not await budget.cover(1000)
    assert budget.refusal.reason == "daily_budget" and budget.refusal.retry_after == 90
    state_reset()
