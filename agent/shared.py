"""State every worker must agree on: counters, budgets and running-turn locks.

With `REDIS_URL` each operation is one Lua script, so it is atomic across workers in one round
trip (no check-then-spend). Without it, one process is the whole site and plain dictionaries
give the same rules. Keys left by a crashed worker expire (locks: `AGENT_LEASE_SECONDS`).

Turn locks: a conversation's lock is `running:<token>` while a turn runs, `saving:<token>`
from its last event until its save lands, then gone. A second turn gets `busy` while it is
running and waits while it is saving. A session holds at most `AGENT_TURNS_PER_SESSION` slots,
and a client's address at most `AGENT_TURNS_PER_IP` (its sessions together), and an IPv6
visitor's /48 at most `AGENT_TURNS_PER_NETWORK` (its /64s together).

Token holds: each turn's is written on its hold record (agent/holds.py), which a dead worker's
recovery settles.
"""

import asyncio
import contextlib
import logging
import time
import uuid
import weakref
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from typing import NamedTuple

from django.conf import settings

from agent.exceptions import SharedStateDown
from agent.holds import (
    ADD_FROM,
    ATTACH,
    CHARGE,
    HOLD_PREFIX,
    HOLD_RECORD_TTL,
    HOLDS,
    RECOVER,
    RECOVER_BATCH,
    REDIS_NOW,
    RENEW,
    SETTLE,
    SETTLE_HOLD,
    HoldSettlement,
)

logger = logging.getLogger(__name__)
SHARED_STATE_DOWN = "The assistant can't take questions for a moment. Please ask again shortly."
# What an HTTP answer refused for that says in Retry-After: a moment, as the message says.
SHARED_STATE_RETRY_SECONDS = 5

# A moving window per key (a sorted set of the allowed events' times): at most `limit` events
# in any `window`, wherever the window starts. Fixed minute windows let a client send twice
# the limit across a minute's edge. Nothing is recorded unless every key allows the event.
# An event may weigh more than one (a costly request): it needs that many places. Each key has
# its own window: a message counts in the minute's and the day's in one trip.
# KEYS: counters. ARGV: a unique member, weight, then (limit, window_ms) per key.
# Returns {index of the first key over (1-based) or 0, ms until it frees the places}.
HIT = (
    REDIS_NOW
    + """
local weight = tonumber(ARGV[2])
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[2 + 2 * i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local need = redis.call('ZCARD', key) + weight - tonumber(ARGV[1 + 2 * i])
  if need > 0 then
    local frees = redis.call('ZRANGE', key, need - 1, need - 1, 'WITHSCORES')[2]
    return {i, (tonumber(frees) or now) + window - now}
  end
end
for i, key in ipairs(KEYS) do
  for j = 1, weight do redis.call('ZADD', key, now, ARGV[1] .. '-' .. j) end
  redis.call('PEXPIRE', key, ARGV[2 + 2 * i])
end
return {0, 0}
"""
)
# Take back one event HIT recorded (its member ARGV[1], of weight ARGV[2]) from every key.
FORGET = """
for _, key in ipairs(KEYS) do
  for j = 1, tonumber(ARGV[2]) do redis.call('ZREM', key, ARGV[1] .. '-' .. j) end
end
return 0
"""
# Hold tokens on every budget: min(amount, the smallest room left), or all of `amount` when
# ARGV[2] is 1 (a running turn asking for more must get all of it or stop). Room counts the
# other turns' holds, so turns racing for the last tokens cannot all win them.
# With a turn id (ARGV[4]), what was held is written on the turn's hold record (KEYS after the
# budgets: the record, the holds' index) in the same trip: a worker killed a moment later
# leaves a record for recovery to settle, never tokens held that nothing knows of.
# KEYS: budgets, then (with an id) record and index. ARGV: amount, whole (0|1), how many
# budgets, id ('' for none), its lease's length (ms), the record's ttl, then (cap, ttl) per budget.
# Returns {index of the first budget without room (1-based) or 0, tokens held}.
RESERVE = (
    REDIS_NOW
    + """
local amount, n, id = tonumber(ARGV[1]), tonumber(ARGV[3]), ARGV[4]
local room = nil
for i = 1, n do
  local left = tonumber(ARGV[5 + 2 * i]) - tonumber(redis.call('GET', KEYS[i]) or '0')
  if left <= 0 or (ARGV[2] == '1' and left < amount) then return {i, 0} end
  if room == nil or left < room then room = left end
end
local held = math.min(amount, room or amount)
for i = 1, n do
  redis.call('INCRBY', KEYS[i], held)
  if redis.call('TTL', KEYS[i]) < 0 then redis.call('EXPIRE', KEYS[i], ARGV[6 + 2 * i]) end
  if id ~= '' then
    redis.call('HINCRBY', KEYS[n + 1], 'k:' .. KEYS[i], held)
    redis.call('HSET', KEYS[n + 1], 't:' .. KEYS[i], ARGV[6 + 2 * i])
  end
end
if id ~= '' then
  redis.call('EXPIRE', KEYS[n + 1], ARGV[6])
  redis.call('ZADD', KEYS[n + 2], now + tonumber(ARGV[5]), id)
end
return {0, held}
"""
)
# Settle budgets: (amount, ttl) per key, through agent.holds' CHARGE.
ADD = (
    CHARGE
    + """
for i, key in ipairs(KEYS) do charge(key, ARGV[2 * i - 1], ARGV[2 * i]) end
return 0
"""
)
# KEYS: conversation lock ('' when none yet), session slots, then (optionally) address slots
# and network slots.
# ARGV: token, ttl_ms, then one limit per slot key. Returns an `Acquired`.
ACQUIRE = (
    REDIS_NOW
    + """
local ttl = tonumber(ARGV[2])
if KEYS[1] ~= '' then
  local held = redis.call('GET', KEYS[1])
  if held then if string.sub(held, 1, 7) == 'saving:' then return 2 end return 1 end
end
for i = 2, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[1 + i]) then return 1 + i end
end
for i = 2, #KEYS do
  redis.call('ZADD', KEYS[i], now + ttl, ARGV[1])
  redis.call('PEXPIRE', KEYS[i], ttl)
end
if KEYS[1] ~= '' then redis.call('SET', KEYS[1], 'running:' .. ARGV[1], 'PX', ttl) end
return 0
"""
)
# KEYS: conversation lock, then the slot keys. ARGV: token, ttl_ms, phase
# ('renew' | 'saving' | 'release').
UPDATE = (
    REDIS_NOW
    + """
local ttl, phase = tonumber(ARGV[2]), ARGV[3]
local mine = false
if KEYS[1] ~= '' then
  local held = redis.call('GET', KEYS[1]) or ''
  mine = held == 'running:' .. ARGV[1] or held == 'saving:' .. ARGV[1]
end
if phase == 'renew' then
  if mine then redis.call('PEXPIRE', KEYS[1], ttl) end
  for i = 2, #KEYS do
    if redis.call('ZSCORE', KEYS[i], ARGV[1]) then
      redis.call('ZADD', KEYS[i], now + ttl, ARGV[1])
      redis.call('PEXPIRE', KEYS[i], ttl)
    end
  end
  return 0
end
for i = 2, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
if mine and phase == 'saving' then redis.call('SET', KEYS[1], 'saving:' .. ARGV[1], 'PX', ttl) end
if mine and phase == 'release' then redis.call('DEL', KEYS[1]) end
return 0
"""
)

# A lock whose holder's process is gone (agent.holders), taken off: only if it is still that
# holder's (KEYS[1] still ARGV[1]), with the dead token's slots (ARGV[2]) in the slot keys given.
UNLOCK = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
for i = 2, #KEYS do redis.call('ZREM', KEYS[i], ARGV[2]) end
return 1
"""

# A turn's end in one trip: settle its budgets (SETTLE, by its hold record when there is one),
# free its slots, and mark its conversation `saving` (UPDATE's 'saving' phase).
# KEYS: conversation lock, the slot keys, the record and the index, the extras, then the
# fallback's budget keys. ARGV: token, ttl_ms, how many slot keys, id ('' for no record),
# target, how many extras, their ttls, then (amount, ttl) per fallback budget.
FINISH = (
    SETTLE_HOLD
    + ADD_FROM
    + """
local token, ttl, slots = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local e = tonumber(ARGV[6])
local extras, ttls = {}, {}
for i = 1, e do extras[i] = KEYS[3 + slots + i]; ttls[i] = ARGV[6 + i] end
local record, index, id = KEYS[2 + slots], KEYS[3 + slots], ARGV[4]
if id == '' or not settle_hold(record, index, id, tonumber(ARGV[5]), true, extras, ttls) then
  add_from(4 + slots + e, 7 + e)
end
for i = 2, 1 + slots do redis.call('ZREM', KEYS[i], token) end
if KEYS[1] ~= '' then
  local held = redis.call('GET', KEYS[1]) or ''
  if held == 'running:' .. token or held == 'saving:' .. token then
    redis.call('SET', KEYS[1], 'saving:' .. token, 'PX', ttl)
  end
end
return 0
"""
)


# A counter `hit` counts in: (key, limit), or (key, limit, its own window in seconds).
type Counter = tuple[str, int] | tuple[str, int, float]


class Hit(NamedTuple):
    over: int  # the 1-based index of the first counter over its limit, or 0: allowed
    retry_after: float  # seconds until that counter has room again


class Held(NamedTuple):
    over: int  # the 1-based index of the first budget without room, or 0
    tokens: int  # tokens now held on every budget


class Acquired(IntEnum):
    OK = 0
    BUSY = 1  # the conversation has a turn running
    SAVING = 2  # the conversation's previous turn is being saved
    SESSION_FULL = 3  # the session runs AGENT_TURNS_PER_SESSION turns already
    ADDRESS_FULL = 4  # the client's address runs AGENT_TURNS_PER_IP turns already
    NETWORK_FULL = 5  # the client's IPv6 /48 runs AGENT_TURNS_PER_NETWORK turns already


# How long a reading of Redis's clock is kept (as an offset from this process's clock): a
# process whose own clock is stepped meanwhile names the day wrongly for at most this long.
CLOCK_READ_SECONDS = 30.0
POOL_SIZE = 100  # Redis connections per worker (redis-py's default)
POOL_WAIT_SECONDS = 10.0


class RedisState:
    """The shared state on Redis: every operation one script call."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._offset: float | None = None  # Redis's clock minus this process's (clock())
        self._offset_read = 0.0

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
                socket_timeout=settings.SHARED_STATE_SECONDS,
                socket_connect_timeout=settings.SHARED_STATE_SECONDS,
            )
            connection = self._clients[loop] = (redis.Redis(connection_pool=pool), {})
        return connection

    async def ping(self) -> bool:
        """Redis answers, over the process's pool (a readiness check must not open a
        connection per request: /readyz is public)."""
        return bool(await self._client().ping())

    async def clock(self) -> float:
        """Redis's time (Unix seconds): the one clock every worker reads the day by.

        Read as this process's clock plus an offset asked of Redis at most every
        CLOCK_READ_SECONDS, not a round trip before every turn.
        """
        if self._offset is None or time.monotonic() - self._offset_read > CLOCK_READ_SECONDS:
            with _reachable():
                seconds, microseconds = await self._client().time()
            self._offset = seconds + microseconds / 1e6 - time.time()
            self._offset_read = time.monotonic()
        return time.time() + self._offset

    async def _eval(self, script: str, keys: list[str], args: list) -> int:
        return int(await self._run(script, keys, args))

    async def _run(self, script: str, keys: list[str], args: list):
        client, scripts = self._connection()
        if script not in scripts:  # EVALSHA from then on: the script is not resent every call
            scripts[script] = client.register_script(script)
        with _reachable():
            return await scripts[script](keys=keys, args=args)

    async def hit(
        self, counters: list[Counter], window: float, weight: int = 1, event: str = ""
    ) -> Hit:
        """Record one event of `weight` on every (key, limit) unless one would then hold more
        than `limit` in the last `window` s (a counter's own third item, when it has one);
        `event` names it for `forget`."""
        member = event or uuid.uuid4().hex
        keys = [counter[0] for counter in counters]
        spans = _flat(
            (c[1], int(span * 1000))
            for c, span in zip(counters, _spans(counters, window), strict=True)
        )
        over, wait_ms = await self._run(HIT, keys, [member, weight, *spans])
        return Hit(int(over), int(wait_ms) / 1000)

    async def forget(self, keys: list[str], event: str, weight: int = 1) -> None:
        """Take back the event `hit` recorded as `event` (it was not one to count)."""
        await self._eval(FORGET, keys, [event, weight])

    async def reserve(
        self,
        budgets: list[tuple[str, int, int]],
        amount: int,
        *,
        whole: bool = False,
        hold: str = "",
    ) -> Held:
        """Hold up to `amount` (all of it when `whole`) on every (key, cap, ttl) with room, and
        write it on turn `hold`'s record (when given), its lease renewed."""
        keys = [b[0] for b in budgets] + ([HOLD_PREFIX + hold, HOLDS] if hold else [])
        args = [amount, int(whole), len(budgets), hold, _ttl_ms(), HOLD_RECORD_TTL]
        over, held = await self._run(RESERVE, keys, [*args, *_flat(b[1:] for b in budgets)])
        return Held(int(over), int(held))

    async def add(self, amounts: list[tuple[str, int, int]]) -> None:
        await self._eval(ADD, [a[0] for a in amounts], _flat(a[1:] for a in amounts))

    async def settle(self, settlement: HoldSettlement) -> None:
        """Charge the turn's budgets what it spent, by its hold record; the record goes."""
        extras = settlement.extras
        keys = [HOLD_PREFIX + settlement.turn_id, HOLDS, *(e[0] for e in extras)]
        keys += [a[0] for a in settlement.fallback]
        args = [settlement.turn_id, settlement.tokens, len(extras), *(e[1] for e in extras)]
        await self._eval(SETTLE, keys, [*args, *_flat(a[1:] for a in settlement.fallback)])

    async def hold_attach(self, turn_id: str, extras: list[tuple[str, int]]) -> None:
        """Write on the turn's record the (key, ttl) budgets it charges only when it settles."""
        keys = [HOLD_PREFIX + turn_id, *(e[0] for e in extras)]
        await self._eval(ATTACH, keys, [e[1] for e in extras])

    async def holds_renew(self, spent: dict[str, int]) -> None:
        """Record each running turn's spending so far and renew its lease (one trip)."""
        if spent:
            keys = [HOLDS, *(HOLD_PREFIX + turn_id for turn_id in spent)]
            await self._eval(RENEW, keys, [_ttl_ms(), *_flat(spent.items())])

    async def holds_recover(self, turn_ids: list[str]) -> dict[str, int]:
        """Settle to their checkpoints the holds of `turn_ids` and of every turn whose lease
        ended; returns the tokens given back, by turn id."""
        args = [HOLD_PREFIX, RECOVER_BATCH, *turn_ids]
        freed = await self._run(RECOVER, [HOLDS], args)
        return {_text(freed[i]): int(freed[i + 1]) for i in range(0, len(freed), 2)}

    async def acquire(
        self,
        conversation: str,
        session: str,
        token: str,
        slots: int,
        address: str = "",
        address_slots: int = 0,
        network: str = "",
        network_slots: int = 0,
    ) -> Acquired:
        """Take the conversation's lock and a slot of the session's (and of the address's and
        the network's, when given), or none of them."""
        keys = [conversation, *_slot_keys(session, address, network)]
        args = [token, _ttl_ms(), slots, address_slots, network_slots]
        return Acquired(await self._eval(ACQUIRE, keys, args))

    async def claim(self, conversation: str, token: str) -> None:
        with _reachable():
            await self._client().set(conversation, f"running:{token}", px=_ttl_ms())

    async def update(
        self,
        conversation: str,
        session: str,
        token: str,
        phase: str,
        address: str = "",
        network: str = "",
    ) -> None:
        keys = [conversation, *_slot_keys(session, address, network)]
        await self._eval(UPDATE, keys, [token, _ttl_ms(), phase])

    async def finish(
        self,
        conversation: str,
        session: str,
        token: str,
        amounts: list[tuple[str, int, int]],
        address: str = "",
        network: str = "",
        hold: HoldSettlement | None = None,
    ) -> None:
        """`settle(hold)` (else `add(amounts)`) and `update(..., "saving")` in one round trip."""
        slots = _slot_keys(session, address, network)
        extras = hold.extras if hold else []
        amounts = hold.fallback if hold else amounts
        record = [HOLD_PREFIX + hold.turn_id, HOLDS] if hold and hold.turn_id else ["", ""]
        keys = [conversation, *slots, *record, *(e[0] for e in extras), *(a[0] for a in amounts)]
        args = [
            token,
            _ttl_ms(),
            len(slots),
            hold.turn_id if hold else "",
            hold.tokens if hold else 0,
        ]
        args += [len(extras), *(e[1] for e in extras), *_flat(a[1:] for a in amounts)]
        await self._eval(FINISH, keys, args)

    async def held(self, conversation: str) -> str:
        return (await self.holder(conversation)).split(":", 1)[0]

    async def holder(self, conversation: str) -> str:
        """The conversation's lock as it stands (`running:<token>`, `saving:<token>`, '')."""
        with _reachable():
            value = await self._client().get(conversation)
        return value.decode() if value else ""

    async def unlock(self, conversation: str, lock: str, slot_keys: list[str]) -> bool:
        """Take off `lock` if it still holds the conversation, and its token's slots."""
        token = lock.split(":", 1)[-1]
        return bool(await self._eval(UNLOCK, [conversation, *slot_keys], [lock, token]))


class LocalState:
    """The same rules for a single process (no REDIS_URL)."""

    def __init__(self) -> None:
        self.counters: dict[str, tuple[int, float]] = {}
        self.windows: dict[str, deque[float]] = {}
        self.spans: dict[str, float] = {}  # each key's own window: limits differ (60 s, 900 s)
        self._hits = 0
        self.locks: dict[str, tuple[str, float]] = {}
        self.slots: dict[str, dict[str, float]] = {}
        self.events: dict[str, tuple[float, float]] = {}  # a named event's time and window
        self.holds: dict[str, _Hold] = {}  # turn id -> its hold record (see SETTLE_HOLD)
        self.leases: dict[str, float] = {}  # turn id -> when its hold's lease ends

    async def ping(self) -> bool:
        return True  # nothing to reach

    async def clock(self) -> float:
        return time.time()  # one process, one clock

    def _get(self, key: str) -> int:
        value, expires = self.counters.get(key, (0, 0.0))
        return value if expires > time.monotonic() else 0

    def _incr(self, key: str, by: int, ttl: int) -> int:
        value, expires = self.counters.get(key, (0, 0.0))
        if expires <= time.monotonic():
            value, expires = 0, time.monotonic() + ttl
        if value + by <= 0:  # back at nothing spent: no entry, as Redis keeps no key (ADD)
            self.counters.pop(key, None)
            return 0
        self.counters[key] = (value + by, expires)
        return value + by

    async def hit(
        self, counters: list[Counter], window: float, weight: int = 1, event: str = ""
    ) -> Hit:
        now = time.monotonic()
        self._sweep(now, window)
        spans = _spans(counters, window)
        for index, (counter, span) in enumerate(zip(counters, spans, strict=True), 1):
            times = self.windows.setdefault(counter[0], deque())
            while times and times[0] <= now - span:
                times.popleft()
            need = len(times) + weight - counter[1]
            if need > 0:
                return Hit(
                    index, (times[min(need, len(times)) - 1] + span - now) if times else span
                )
        for counter, span in zip(counters, spans, strict=True):
            self.windows[counter[0]].extend([now] * weight)
            self.spans[counter[0]] = span
        if event:
            self.events[event] = (now, max(spans, default=window))
        return Hit(0, 0.0)

    async def forget(self, keys: list[str], event: str, weight: int = 1) -> None:
        at, _window = self.events.pop(event, (None, 0.0))
        for key in keys if at is not None else []:
            for _ in range(weight):
                if at in self.windows.get(key, ()):
                    self.windows[key].remove(at)

    def _sweep(self, now: float, window: float) -> None:
        # Every visitor leaves a key; drop the idle ones now and then so the dict stays small.
        # Idle by the key's own window: judged by the caller's 60 s, a sign-in count (900 s)
        # was dropped after any thousand other checks, refused ones included.
        self._hits += 1
        if self._hits % 1000 == 0:
            idle = [
                k
                for k, t in self.windows.items()
                if not t or t[-1] <= now - self.spans.get(k, window)
            ]
            for key in idle:
                del self.windows[key]
                self.spans.pop(key, None)
            for event in [e for e, (at, span) in self.events.items() if at <= now - span]:
                del self.events[event]
            # Token budgets too: Redis expires them, here every conversation left one behind
            # until the process restarted (ttl seven days, and no read ever removed it).
            clock = time.monotonic()
            for key in [k for k, (_, expires) in self.counters.items() if expires <= clock]:
                del self.counters[key]
            self._sweep_holds(clock)
            for turn_id in [t for t, record in self.holds.items() if record.expires <= clock]:
                del self.holds[turn_id]

    def _sweep_holds(self, clock: float) -> None:
        """Drop the turn locks and session slots whose leases ran out (a turn whose release
        never came: Redis expires those keys by themselves)."""
        for key in [k for k, (_, expires) in self.locks.items() if expires <= clock]:
            del self.locks[key]
        for session in list(self.slots):
            if all(expires <= clock for expires in self.slots[session].values()):
                del self.slots[session]

    async def reserve(
        self,
        budgets: list[tuple[str, int, int]],
        amount: int,
        *,
        whole: bool = False,
        hold: str = "",
    ) -> Held:
        room = amount
        for index, (key, cap, _ttl) in enumerate(budgets, 1):
            left = cap - self._get(key)
            if left <= 0 or (whole and left < amount):
                return Held(index, 0)
            room = min(room, left)
        record = self._hold(hold, create=True) if hold else None
        for key, _cap, ttl in budgets:
            self._incr(key, room, ttl)
            if record is not None:
                record.charged[key] = record.charged.get(key, 0) + room
                record.ttls[key] = ttl
        if hold:
            self.leases[hold] = time.monotonic() + settings.AGENT_LEASE_SECONDS
        return Held(0, room)

    async def add(self, amounts: list[tuple[str, int, int]]) -> None:
        for key, by, ttl in amounts:
            self._incr(key, by, ttl)

    async def settle(self, settlement: HoldSettlement) -> None:
        turn_id, tokens, extras, fallback = settlement
        if not self._settle_hold(turn_id, tokens, final=True, extras=extras):
            await self.add(fallback)

    async def hold_attach(self, turn_id: str, extras: list[tuple[str, int]]) -> None:
        record = self._hold(turn_id)
        if record is not None:
            record.attach(extras)

    async def holds_renew(self, spent: dict[str, int]) -> None:
        for turn_id, tokens in spent.items():
            record = self._hold(turn_id)
            if record is not None:
                record.spent = tokens
                self.leases[turn_id] = time.monotonic() + settings.AGENT_LEASE_SECONDS

    async def holds_recover(self, turn_ids: list[str]) -> dict[str, int]:
        now = time.monotonic()
        ended = [turn_id for turn_id, ends in self.leases.items() if ends <= now]
        freed = {}
        for turn_id in dict.fromkeys([*turn_ids, *ended[:RECOVER_BATCH]]):
            record = self._hold(turn_id)
            held = max(record.charged.values(), default=None) if record else None
            if self._settle_hold(turn_id, -1, final=False) and held is not None:
                freed[turn_id] = held - record.spent
        return freed

    def _hold(self, turn_id: str, *, create: bool = False) -> "_Hold | None":
        record = self.holds.get(turn_id)
        if record is not None and record.expires <= time.monotonic():
            del self.holds[turn_id]  # as Redis expires the key
            record = None
        if record is None and create:
            record = self.holds[turn_id] = _Hold()
        if record is not None and create:
            record.expires = time.monotonic() + HOLD_RECORD_TTL
        return record

    def _settle_hold(
        self, turn_id: str, target: int, *, final: bool, extras: list[tuple[str, int]] = ()
    ) -> bool:
        """SETTLE_HOLD's rules: the record's budgets charged `target` in all (its `spent` when
        target < 0); False when there is no record."""
        self.leases.pop(turn_id, None)
        record = self._hold(turn_id)
        if record is None:
            return False
        record.attach(extras)
        target = record.spent if target < 0 else target
        for key, charged in record.charged.items():
            if target != charged:
                self._incr(key, target - charged, record.ttls[key])
                record.charged[key] = target
        if final:
            del self.holds[turn_id]
        return True

    async def acquire(
        self,
        conversation: str,
        session: str,
        token: str,
        slots: int,
        address: str = "",
        address_slots: int = 0,
        network: str = "",
        network_slots: int = 0,
    ) -> Acquired:
        now = time.monotonic()
        held = self._lock(conversation)
        if held:
            return Acquired.SAVING if held.startswith("saving:") else Acquired.BUSY
        limits = [(session, slots, Acquired.SESSION_FULL)]
        if address:
            limits.append((address, address_slots, Acquired.ADDRESS_FULL))
        if network:
            limits.append((network, network_slots, Acquired.NETWORK_FULL))
        running = {}
        for key, limit, full in limits:
            running[key] = {t: exp for t, exp in self.slots.get(key, {}).items() if exp > now}
            if len(running[key]) >= limit:
                return full
        for key, taken in running.items():
            taken[token] = now + settings.AGENT_LEASE_SECONDS
            self.slots[key] = taken
        if conversation:
            self.locks[conversation] = (f"running:{token}", now + settings.AGENT_LEASE_SECONDS)
        return Acquired.OK

    async def claim(self, conversation: str, token: str) -> None:
        self.locks[conversation] = (f"running:{token}", time.monotonic() + _ttl_ms() / 1000)

    async def update(
        self,
        conversation: str,
        session: str,
        token: str,
        phase: str,
        address: str = "",
        network: str = "",
    ) -> None:
        expires = time.monotonic() + settings.AGENT_LEASE_SECONDS
        mine = self._lock(conversation) in {f"running:{token}", f"saving:{token}"}
        keys = _slot_keys(session, address, network)
        if phase == "renew":
            if mine:
                self.locks[conversation] = (self.locks[conversation][0], expires)
            for key in keys:
                if token in self.slots.get(key, {}):
                    self.slots[key][token] = expires
            return
        for key in keys:
            running = self.slots.get(key, {})
            running.pop(token, None)
            if not running:
                # Every session that ever asked kept an empty entry until the process
                # restarted: an address minting sessions grew it by about 43,000 a day.
                self.slots.pop(key, None)
        if mine and phase == "saving":
            self.locks[conversation] = (f"saving:{token}", expires)
        elif mine and phase == "release":
            del self.locks[conversation]

    async def finish(
        self,
        conversation: str,
        session: str,
        token: str,
        amounts: list[tuple[str, int, int]],
        address: str = "",
        network: str = "",
        hold: HoldSettlement | None = None,
    ) -> None:
        if hold is not None:
            await self.settle(hold)
        else:
            await self.add(amounts)
        await self.update(conversation, session, token, "saving", address, network)

    async def held(self, conversation: str) -> str:
        return self._lock(conversation).split(":", 1)[0]

    async def holder(self, conversation: str) -> str:
        return self._lock(conversation)

    async def unlock(self, conversation: str, lock: str, slot_keys: list[str]) -> bool:
        if not lock or self._lock(conversation) != lock:
            return False
        del self.locks[conversation]
        for key in slot_keys:
            self.slots.get(key, {}).pop(lock.split(":", 1)[-1], None)
        return True

    def _lock(self, conversation: str) -> str:
        value, expires = self.locks.get(conversation, ("", 0.0))
        return value if expires > time.monotonic() else ""


@dataclass
class _Hold:
    """A turn's hold record in one process (as SETTLE_HOLD's hash in Redis)."""

    charged: dict[str, int] = field(default_factory=dict)  # budget key -> charged by the turn
    ttls: dict[str, int] = field(default_factory=dict)
    spent: int = 0  # as its last checkpoint counted
    expires: float = 0.0  # time.monotonic()

    def attach(self, extras) -> None:
        for key, ttl in extras:
            self.charged.setdefault(key, 0)
            self.ttls[key] = ttl


@contextlib.contextmanager
def _reachable() -> Iterator[None]:
    """Redis refusing, timing out or read-only (a replica promoted away) is SharedStateDown:
    every caller then answers a typed `unavailable` instead of a 500 page or a refused
    socket. A script's own error is a bug and stays what it is."""
    from redis.exceptions import ConnectionError, ReadOnlyError, TimeoutError

    try:
        yield
    except (ConnectionError, TimeoutError, ReadOnlyError) as exc:
        _down_say(exc)
        raise SharedStateDown(SHARED_STATE_DOWN) from exc


DOWN_SAY_EVERY = 10.0  # seconds between two "unreachable" lines of one process
_down_said = [float("-inf"), 0]  # when this process last said so, and the failures since


def _down_say(exc: Exception) -> None:
    """One line, no traceback (the cause is known, and /metrics has docent_redis_up), at most
    every DOWN_SAY_EVERY seconds: it was one per request, so in an outage the visitors decided
    how fast the log grew (a reload storm wrote hundreds of the same line a second)."""
    now = time.monotonic()
    if now - _down_said[0] < DOWN_SAY_EVERY:
        _down_said[1] += 1
        return
    since, _down_said[:] = _down_said[1], [now, 0]
    more = f" ({since} more requests failed since the last such line)" if since else ""
    logger.warning(
        "the shared state (Redis) is unreachable: %s%s; chat messages, votes, searches and "
        "admin sign-ins are refused until it answers: start it, or check REDIS_URL",
        exc, more,
    )  # fmt: skip


def _slot_keys(session: str, address: str, network: str = "") -> list[str]:
    """The slot keys a turn holds: its session's, and its address's and network's when it has
    them (a network only with an address)."""
    return [session, *(key for key in (address, network) if key)]


def _spans(counters: list[Counter], window: float) -> list[float]:
    """Each counter's window: its own third item, else the call's."""
    return [float(counter[2]) if len(counter) > 2 else window for counter in counters]


def _flat(groups) -> list:
    return [item for group in groups for item in group]


def _ttl_ms() -> int:
    return int(settings.AGENT_LEASE_SECONDS * 1000)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


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
