"""Turn hold records on the shared state: what a turn holds on its budgets, kept where the
recovery of a dead worker's turns can find it and give back what the turn did not spend.

A turn's holds (agent.ratelimit.TurnBudget) are written on its record in the same script that
takes them (agent.shared's RESERVE); its checkpoints add what it has spent so far and renew its
lease; its end, or recovery, settles it. These are the scripts and names agent.shared runs.
"""

from typing import NamedTuple

# Redis's own clock, in ms, for the scripts that stamp and expire by time (moving windows, turn
# slots): each worker's clock stamped them before, and a worker whose clock ran a window ahead
# swept every other worker's events as old (a limit of 3 a minute let a fourth in at once), or
# a lease's length ahead, their running turns' slots. Scripts may call TIME since Redis 5.
# A hold's lease ends by it too: a worker that ran recovery a lease ahead settled every other
# worker's running turns as dead.
REDIS_NOW = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
"""

# Charge a budget `amount` (negative gives back), its ttl set when it has none. A budget back
# at 0 or below is deleted, since no key means 0: a turn refused after its hold (a made-up
# conversation id, a page that is not an article) left `tok:c:<id>` at 0 for seven days, one
# key per message; below 0, its key vanished while a turn held it.
CHARGE = """
local function charge(key, amount, ttl)
  if redis.call('INCRBY', key, amount) <= 0 then redis.call('DEL', key)
  elseif redis.call('TTL', key) < 0 then redis.call('EXPIRE', key, ttl) end
end
"""
# A turn's hold record (`hold:t:<turn id>`, a hash): per budget key, `k:<key>` is what the turn
# has charged it (held, or settled) and `t:<key>` the key's ttl; `spent` is the turn's spending
# as its last checkpoint counted it. The index (HOLDS) scores each turn by when its lease ends:
# the checkpoints renew it while the turn's worker lives.
# SETTLE_HOLD charges each of the record's budgets `target` in all (the recorded `spent` when
# target < 0): it adds target minus what the turn charged it, so settling twice, or a late
# settlement after recovery's, leaves each budget charged exactly once. `extras` are budgets
# the turn charges only when settled (a new conversation's own); `final` deletes the record,
# else it stays (recovery's: a worker that was only stuck settles over it when it ends).
# Returns whether the record was there (else the caller settles by its own figures).
# Every script that charges or settles a budget charges it through `charge`.
SETTLE_HOLD = (
    CHARGE
    + """
local function settle_hold(record, index, id, target, final, extras, extra_ttls)
  if redis.call('EXISTS', record) == 0 then
    redis.call('ZREM', index, id)
    return false
  end
  for i, key in ipairs(extras) do
    redis.call('HSETNX', record, 'k:' .. key, 0)
    redis.call('HSET', record, 't:' .. key, extra_ttls[i])
  end
  local fields = redis.call('HGETALL', record)
  local hold = {}
  for i = 1, #fields, 2 do hold[fields[i]] = fields[i + 1] end
  if target < 0 then target = tonumber(hold['spent'] or '0') end
  for field, charged in pairs(hold) do
    if string.sub(field, 1, 2) == 'k:' then
      local key = string.sub(field, 3)
      local change = target - tonumber(charged)
      if change ~= 0 then
        charge(key, change, hold['t:' .. key])
        redis.call('HSET', record, field, target)
      end
    end
  end
  if final then redis.call('DEL', record) end
  redis.call('ZREM', index, id)
  return true
end
"""
)
# Apply (amount, ttl) per key of KEYS[first..] from ARGV[at..]: a settlement by the turn's own
# figures (no hold record: none was written, or Redis lost it).
# It follows SETTLE_HOLD in every script, which brings `charge`.
ADD_FROM = """
local function add_from(first, at)
  for i = first, #KEYS do
    local a = at + 2 * (i - first)
    charge(KEYS[i], ARGV[a], ARGV[a + 1])
  end
end
"""
# A turn's budgets settled to `target`, by its hold record if there is one.
# KEYS: record, index, extras, then the fallback's keys. ARGV: id, target, how many extras,
# their ttls, then (amount, ttl) per fallback key.
SETTLE = (
    SETTLE_HOLD
    + ADD_FROM
    + """
local e = tonumber(ARGV[3])
local extras, ttls = {}, {}
for i = 1, e do extras[i] = KEYS[2 + i]; ttls[i] = ARGV[3 + i] end
if not settle_hold(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), true, extras, ttls) then
  add_from(3 + e, 4 + e)
end
return 0
"""
)
# The checkpoints of a worker's running turns: each one's spending so far, its lease renewed.
# KEYS: index, then one record per turn. ARGV: the leases' length (ms), then (id, spent) per
# turn. Leases end by Redis's clock (REDIS_NOW), whichever worker renews or recovers.
RENEW = (
    REDIS_NOW
    + """
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('HSET', KEYS[i], 'spent', ARGV[2 * i - 1])
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2 * i - 2])
  end
end
return 0
"""
)
# Recovery: the holds of the turns given, and of every turn whose lease has ended, settled to
# what their checkpoints counted (records kept). KEYS: index. ARGV: the records' prefix, how
# many to sweep at most, then turn ids. Returns {id, tokens given back, ...}.
RECOVER = (
    REDIS_NOW
    + SETTLE_HOLD
    + """
local ids = {}
for i = 3, #ARGV do ids[#ids + 1] = ARGV[i] end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, ARGV[2])) do
  ids[#ids + 1] = id
end
local freed, seen = {}, {}
for _, id in ipairs(ids) do
  if not seen[id] then
    seen[id] = true
    local record = ARGV[1] .. id
    local before = redis.call('HGETALL', record)
    local held, spent = nil, tonumber(redis.call('HGET', record, 'spent') or '0')
    for i = 1, #before, 2 do
      if string.sub(before[i], 1, 2) == 'k:' then
        local charged = tonumber(before[i + 1])
        if held == nil or charged > held then held = charged end
      end
    end
    if settle_hold(record, KEYS[1], id, -1, false, {}, {}) and held ~= nil then
      freed[#freed + 1] = id
      freed[#freed + 1] = held - spent
    end
  end
end
return freed
"""
)
# A budget a turn charges only when it settles (a new conversation's own), written on its
# record once known. KEYS: record, then the budgets. ARGV: their ttls.
ATTACH = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 2, #KEYS do
  redis.call('HSETNX', KEYS[1], 'k:' .. KEYS[i], 0)
  redis.call('HSET', KEYS[1], 't:' .. KEYS[i], ARGV[i - 1])
end
return 0
"""

HOLD_PREFIX = "hold:t:"  # a turn's hold record, by turn id
HOLDS = "holds"  # the index of hold records by the end of their lease
HOLD_RECORD_TTL = 2 * 24 * 3600  # as long as a day's budget key lives
RECOVER_BATCH = 500  # expired leases settled per recovery run, at most


class HoldSettlement(NamedTuple):
    """A turn's hold settled at its end: its budgets charged `tokens` in all, `extras` (key,
    ttl) included, by its record; `fallback` is the same by the turn's own figures."""

    turn_id: str
    tokens: int
    extras: list[tuple[str, int]]
    fallback: list[tuple[str, int, int]]
