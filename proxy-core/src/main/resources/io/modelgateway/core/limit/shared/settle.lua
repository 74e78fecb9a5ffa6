-- Shared limits: settles one admission, at most once: its hold (set by admit.lua) is deleted first, and an
-- admission whose hold is gone (settled before, or never admitted) changes nothing. So a settlement sent again
-- after a timeout, or a cancellation of an admission that never reached Redis, cannot count twice.
-- Mirrors LimitedAdmission.release: token reservations corrected by the real usage (never past an empty bucket,
-- never below 0), slots freed, the daily usage of the admission's day corrected (another day's is left alone);
-- a refund (an admission cancelled because its answer came too late) also gives back the request it took.
--
-- KEYS: as admit.lua. ARGV: now in microseconds (negative: TIME), admission id, actual tokens, refund (0/1), n;
-- then per scope: requests/min held, tokens/min held, tokens reserved, slot held (0/1), daily held (0/1), tokens
-- reserved on the day (0 where nothing is held); then the key's spend: counted (0/1), the admission's month, the
-- micro-dollars reserved on the day and on the month, and the real cost (0 for a cancellation). The admission's day
-- is the hold's value: a cancellation (sent when admit.lua's answer never came) could not know it. Spend is
-- corrected in the admission's own day and month only, as SpendBudgets does. Last: whether the admission asked for
-- a batch (0/1; then the hold is read for the batch taken, k, which is 1 otherwise) and the requests of it that were
-- used. The reservations per scope are per request: a batch held k of each, and gives back the requests it did not
-- use (a cancellation, all k), the tokens reserved beyond the actual tokens of all its requests.
-- Returns 1 when settled now, 0 when there was nothing to settle.
local W = 60000000
local KEEP = 172800000
local n = tonumber(ARGV[5])
local sb = 5 + 6 * n
local hold = KEYS[2 * n + 1]
-- The admission's day matters only to a daily budget or a spend; otherwise deleting the hold is the whole check
-- (each redis.call costs Redis more than the arithmetic around it).
local batched = ARGV[sb + 6] == '1'
local needsDay = ARGV[sb + 1] == '1' or batched
for i = 1, n do
  if ARGV[5 + (i - 1) * 6 + 5] == '1' then
    needsDay = true
  end
end
local day
local k = 1
if needsDay then
  local held = redis.call('GET', hold)
  if not held then
    return 0
  end
  local d, taken = string.match(held, '^(%d+):(%d+)$')
  if d then
    day, k = tonumber(d), tonumber(taken)
  else
    day = tonumber(held)
  end
  if not day then
    return 0
  end
  redis.call('DEL', hold)
elseif redis.call('DEL', hold) == 0 then
  return 0
end

-- Redis's clock, read only when a refill needs it.
local now = tonumber(ARGV[1])
local function clock()
  if now < 0 then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  return now
end
local id = ARGV[2]
local actual = tonumber(ARGV[3])
local refund = ARGV[4] == '1'
local used = tonumber(ARGV[sb + 7]) or 1
-- Requests given back: a cancellation's all, a batch's unused.
local back = k - used
if refund then
  back = k
end

local function refilled(elapsed, cap)
  return math.floor(elapsed / W) * cap + math.floor((elapsed % W) * cap / W)
end

local function toRefill(units, cap)
  return math.floor(units * W / cap)
end

local function level(used, at, cap)
  if used > cap then
    used = cap
  end
  if used <= 0 then
    return 0, clock()
  end
  local elapsed = clock() - at
  if elapsed <= 0 then
    return used, at
  end
  local r = refilled(elapsed, cap)
  if r >= used then
    return 0, now
  end
  return used - r, at + toRefill(r, cap)
end

-- Subtracting needs no clock: it commutes with refilling (both only lower the level, clamped at 0). One call on the
-- common path (the level was at least the amount); below 0 it is clamped, and a field that was 0 or missing (the hash
-- perhaps too: Redis flushed since the admission) is removed again, so no hash is left without the expiry admit.lua
-- gave it. The levels are whole numbers, as HINCRBY needs.
local function giveBack(usage, field, amount)
  local left = redis.call('HINCRBY', usage, field, -amount)
  if left < 0 then
    if left == -amount then
      redis.call('HDEL', usage, field)
    else
      redis.call('HSET', usage, field, 0)
    end
  end
end

for i = 1, n do
  local b = 5 + (i - 1) * 6
  local rpm, tpm, reserved = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3])
  local slot, daily, dailyReserved = ARGV[b + 4] == '1', ARGV[b + 5] == '1', tonumber(ARGV[b + 6])
  local usage = KEYS[2 * i - 1]
  if back > 0 and rpm > 0 then
    giveBack(usage, 'ru', back)
  end
  if tpm > 0 then
    local delta = actual - reserved * k
    if delta < 0 then
      giveBack(usage, 'tu', -delta)
    elseif delta > 0 then
      local s = redis.call('HMGET', usage, 'tu', 'ta')
      local used, at = level(tonumber(s[1]) or 0, tonumber(s[2]) or 0, tpm)
      redis.call('HSET', usage, 'tu', math.min(used + delta, tpm), 'ta', at)
      -- The hash may be new (Redis flushed since the admission): it gets an expiry.
      redis.call('PEXPIRE', usage, KEEP)
    end
  end
  if slot then
    redis.call('ZREM', KEYS[2 * i], id)
  end
  if daily then
    -- Only a hash that holds the day (so has its expiry) is changed.
    local s = redis.call('HMGET', usage, 'dd', 'du')
    if tonumber(s[1]) == day then
      redis.call('HSET', usage, 'du', math.max(0, (tonumber(s[2]) or 0) + actual - dailyReserved * k))
    end
  end
end
if ARGV[sb + 1] == '1' then
  local spendKey = KEYS[2 * n + 2]
  local month = tonumber(ARGV[sb + 2])
  local dayReserved, monthReserved = tonumber(ARGV[sb + 3]), tonumber(ARGV[sb + 4])
  local cost = tonumber(ARGV[sb + 5])
  local s = redis.call('HMGET', spendKey, 'sd', 'su', 'sm', 'mu')
  if tonumber(s[1]) == day then
    redis.call('HSET', spendKey, 'su', math.max(0, (tonumber(s[2]) or 0) + cost - dayReserved))
  end
  if tonumber(s[3]) == month then
    redis.call('HSET', spendKey, 'mu', math.max(0, (tonumber(s[4]) or 0) + cost - monthReserved))
  end
end
return 1
