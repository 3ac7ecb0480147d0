"""State every worker must agree on: counters, budgets and running-turn locks.

With `REDIS_URL` each operation is one Lua script, so it is atomic across workers in one round
trip (no check-then-spend). Without it, one process is the whole site and plain dictionaries
give the same rules. Keys left by a crashed worker expire (locks: `AGENT_LEASE_SECONDS`).

Turn locks: a conversation's lock is `running:<token>` while a turn runs, `saving:<token>`
from its last event until its save lands, then gone. A second turn gets `busy` while it is
running and waits while it is saving. A session holds at most `AGENT_TURNS_PER_SESSION` slots.
"""

import asyncio
import time
import weakref
from enum import IntEnum

from django.conf import settings

HIT = """
local over = 0
for i, key in ipairs(KEYS) do
  local n = redis.call('INCR', key)
  if n == 1 then redis.call('EXPIRE', key, ARGV[2 * i]) end
  if over == 0 and n > tonumber(ARGV[2 * i - 1]) then over = i end
end
return over
"""
RESERVE = """
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') >= tonumber(ARGV[2 * i]) then return i end
end
for i, key in ipairs(KEYS) do
  redis.call('INCRBY', key, ARGV[1])
  if redis.call('TTL', key) < 0 then redis.call('EXPIRE', key, ARGV[2 * i + 1]) end
end
return 0
"""
ADD = """
for i, key in ipairs(KEYS) do
  redis.call('INCRBY', key, ARGV[2 * i - 1])
  if redis.call('TTL', key) < 0 then redis.call('EXPIRE', key, ARGV[2 * i]) end
end
return 0
"""
# KEYS: conversation lock ('' when none yet), session slots. ARGV: token, now_ms, ttl_ms, slots.
ACQUIRE = """
local now, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
if KEYS[1] ~= '' then
  local held = redis.call('GET', KEYS[1])
  if held then if string.sub(held, 1, 7) == 'saving:' then return 2 end return 1 end
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 3 end
redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[2], ttl)
if KEYS[1] ~= '' then redis.call('SET', KEYS[1], 'running:' .. ARGV[1], 'PX', ttl) end
return 0
"""
# ARGV: token, now_ms, ttl_ms, phase ('renew' | 'saving' | 'release').
UPDATE = """
local now, ttl, phase = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local mine = false
if KEYS[1] ~= '' then
  local held = redis.call('GET', KEYS[1]) or ''
  mine = held == 'running:' .. ARGV[1] or held == 'saving:' .. ARGV[1]
end
if phase == 'renew' then
  if mine then redis.call('PEXPIRE', KEYS[1], ttl) end
  if redis.call('ZSCORE', KEYS[2], ARGV[1]) then
    redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
    redis.call('PEXPIRE', KEYS[2], ttl)
  end
  return 0
end
redis.call('ZREM', KEYS[2], ARGV[1])
if mine and phase == 'saving' then redis.call('SET', KEYS[1], 'saving:' .. ARGV[1], 'PX', ttl) end
if mine and phase == 'release' then redis.call('DEL', KEYS[1]) end
return 0
"""

# A turn's end in one trip: settle its budgets (ADD), free its session slot, and mark its
# conversation `saving` (UPDATE's 'saving' phase). KEYS: conversation lock, session slots,
# budget keys. ARGV: token, ttl_ms, then (amount, ttl) per budget key.
FINISH = """
local token, ttl = ARGV[1], tonumber(ARGV[2])
for i = 3, #KEYS do
  redis.call('INCRBY', KEYS[i], ARGV[2 * i - 3])
  if redis.call('TTL', KEYS[i]) < 0 then redis.call('EXPIRE', KEYS[i], ARGV[2 * i - 2]) end
end
redis.call('ZREM', KEYS[2], token)
if KEYS[1] ~= '' then
  local held = redis.call('GET', KEYS[1]) or ''
  if held == 'running:' .. token or held == 'saving:' .. token then
    redis.call('SET', KEYS[1], 'saving:' .. token, 'PX', ttl)
  end
end
return 0
"""


class Acquired(IntEnum):
    OK = 0
    BUSY = 1  # the conversation has a turn running
    SAVING = 2  # the conversation's previous turn is being saved
    SESSION_FULL = 3  # the session runs AGENT_TURNS_PER_SESSION turns already


POOL_SIZE = 100  # Redis connections per worker (redis-py's default)
POOL_WAIT_SECONDS = 10.0


class RedisState:
    """The shared state on Redis: every operation one script call."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def _client(self):
        return self._connection()[0]

    def _connection(self) -> tuple:
        # redis.asyncio connections belong to one event loop.
        import redis.asyncio as redis

        loop = asyncio.get_running_loop()
        connection = self._clients.get(loop)
        if connection is None:
            # A blocking pool: a burst of turns (a worker taking over a dead one's visitors)
            # waits a moment for a connection instead of failing past the pool's size.
            # One DriverInfo for the pool: by default each new connection reads redis-py's
            # version from its package metadata (an email-parser pass), and under a burst of
            # turns the pool grows by hundreds of connections (bench/chat_load.py --profile).
            from redis.driver_info import DriverInfo

            pool = redis.BlockingConnectionPool.from_url(
                self.url,
                max_connections=POOL_SIZE,
                timeout=POOL_WAIT_SECONDS,
                driver_info=DriverInfo(),
            )
            connection = self._clients[loop] = (redis.Redis(connection_pool=pool), {})
        return connection

    async def _eval(self, script: str, keys: list[str], args: list) -> int:
        client, scripts = self._connection()
        if script not in scripts:  # EVALSHA from then on: the script is not resent every call
            scripts[script] = client.register_script(script)
        return int(await scripts[script](keys=keys, args=args))

    async def hit(self, counters: list[tuple[str, int, int]]) -> int:
        """Count one event on each (key, limit, ttl); the 1-based index of one over, or 0."""
        return await self._eval(HIT, [c[0] for c in counters], _flat(c[1:] for c in counters))

    async def reserve(self, budgets: list[tuple[str, int, int]], amount: int) -> int:
        """Add `amount` to every (key, cap, ttl) unless one is spent; its 1-based index, or 0."""
        keys = [b[0] for b in budgets]
        return await self._eval(RESERVE, keys, [amount, *_flat(b[1:] for b in budgets)])

    async def add(self, amounts: list[tuple[str, int, int]]) -> None:
        await self._eval(ADD, [a[0] for a in amounts], _flat(a[1:] for a in amounts))

    async def acquire(self, conversation: str, session: str, token: str, slots: int) -> Acquired:
        args = [token, _now_ms(), _ttl_ms(), slots]
        return Acquired(await self._eval(ACQUIRE, [conversation, session], args))

    async def claim(self, conversation: str, token: str) -> None:
        await self._client().set(conversation, f"running:{token}", px=_ttl_ms())

    async def update(self, conversation: str, session: str, token: str, phase: str) -> None:
        await self._eval(UPDATE, [conversation, session], [token, _now_ms(), _ttl_ms(), phase])

    async def finish(
        self, conversation: str, session: str, token: str, amounts: list[tuple[str, int, int]]
    ) -> None:
        """`add(amounts)` and `update(..., "saving")` in one round trip."""
        keys = [conversation, session, *(a[0] for a in amounts)]
        await self._eval(FINISH, keys, [token, _ttl_ms(), *_flat(a[1:] for a in amounts)])

    async def held(self, conversation: str) -> str:
        value = await self._client().get(conversation)
        return value.decode().split(":", 1)[0] if value else ""


class LocalState:
    """The same rules for a single process (no REDIS_URL)."""

    def __init__(self) -> None:
        self.counters: dict[str, tuple[int, float]] = {}
        self.locks: dict[str, tuple[str, float]] = {}
        self.slots: dict[str, dict[str, float]] = {}

    def _get(self, key: str) -> int:
        value, expires = self.counters.get(key, (0, 0.0))
        return value if expires > time.monotonic() else 0

    def _incr(self, key: str, by: int, ttl: int) -> int:
        value, expires = self.counters.get(key, (0, 0.0))
        if expires <= time.monotonic():
            value, expires = 0, time.monotonic() + ttl
        self.counters[key] = (value + by, expires)
        return value + by

    async def hit(self, counters: list[tuple[str, int, int]]) -> int:
        over = 0
        for index, (key, limit, ttl) in enumerate(counters, 1):
            if self._incr(key, 1, ttl) > limit and not over:
                over = index
        return over

    async def reserve(self, budgets: list[tuple[str, int, int]], amount: int) -> int:
        for index, (key, cap, _ttl) in enumerate(budgets, 1):
            if self._get(key) >= cap:
                return index
        for key, _cap, ttl in budgets:
            self._incr(key, amount, ttl)
        return 0

    async def add(self, amounts: list[tuple[str, int, int]]) -> None:
        for key, by, ttl in amounts:
            self._incr(key, by, ttl)

    async def acquire(self, conversation: str, session: str, token: str, slots: int) -> Acquired:
        now = time.monotonic()
        held = self._lock(conversation)
        if held:
            return Acquired.SAVING if held.startswith("saving:") else Acquired.BUSY
        running = {t: exp for t, exp in self.slots.get(session, {}).items() if exp > now}
        if len(running) >= slots:
            return Acquired.SESSION_FULL
        running[token] = now + settings.AGENT_LEASE_SECONDS
        self.slots[session] = running
        if conversation:
            self.locks[conversation] = (f"running:{token}", now + settings.AGENT_LEASE_SECONDS)
        return Acquired.OK

    async def claim(self, conversation: str, token: str) -> None:
        self.locks[conversation] = (f"running:{token}", time.monotonic() + _ttl_ms() / 1000)

    async def update(self, conversation: str, session: str, token: str, phase: str) -> None:
        expires = time.monotonic() + settings.AGENT_LEASE_SECONDS
        mine = self._lock(conversation) in {f"running:{token}", f"saving:{token}"}
        if phase == "renew":
            if mine:
                self.locks[conversation] = (self.locks[conversation][0], expires)
            if token in self.slots.get(session, {}):
                self.slots[session][token] = expires
            return
        self.slots.get(session, {}).pop(token, None)
        if mine and phase == "saving":
            self.locks[conversation] = (f"saving:{token}", expires)
        elif mine and phase == "release":
            del self.locks[conversation]

    async def finish(
        self, conversation: str, session: str, token: str, amounts: list[tuple[str, int, int]]
    ) -> None:
        await self.add(amounts)
        await self.update(conversation, session, token, "saving")

    async def held(self, conversation: str) -> str:
        return self._lock(conversation).split(":", 1)[0]

    def _lock(self, conversation: str) -> str:
        value, expires = self.locks.get(conversation, ("", 0.0))
        return value if expires > time.monotonic() else ""


def _flat(groups) -> list:
    return [item for group in groups for item in group]


def _now_ms() -> int:
    return int(time.time() * 1000)


def _ttl_ms() -> int:
    return int(settings.AGENT_LEASE_SECONDS * 1000)


_state: dict[str, RedisState | LocalState] = {}


def state() -> RedisState | LocalState:
    """The site's shared state: Redis when REDIS_URL is set, else this process's own."""
    url = settings.REDIS_URL
    if url not in _state:
        _state[url] = RedisState(url) if url else LocalState()
    return _state[url]


def state_reset() -> None:
    """Forget the process's state (tests: each starts with fresh limits)."""
    _state.clear()
