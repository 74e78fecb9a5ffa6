-- Shared limits: admits one request against every scope that limits it, all or nothing, in one atomic step.
-- The arithmetic is TokenBucket's and DailyBudget's (see RateLimiter), in microseconds instead of nanoseconds:
-- a per-minute bucket stores what is in use and the instant that was exact, never goes past empty, and waits and
-- resets never exceed the window; a daily budget stores the day and the tokens used on it.
--
-- KEYS, for scope i of n (key, key on model, model; in that order): KEYS[2i-1] the usage hash (ru, ra: requests
-- used and at; tu, ta: tokens; dd, du: day and tokens used on it; x: the ms its expiry was last set at), KEYS[2i]
-- the sorted set of concurrency leases (member: admission id, score: expiry in ms). KEYS[2n+1]: the admission's hold
-- (its value: the day it was admitted on), which its settlement deletes. KEYS[2n+2], when the key's spend is
-- counted: the key's spend hash (sd, su: the day and the micro-dollars spent on it; sm, mu: the month, months since
-- 1970-01, and its spend).
-- ARGV: now in microseconds (negative: the server's TIME), admission id, lease ttl ms, hold ttl ms, the token
-- estimate (reserved on daily budgets), n; then per scope: requests/min, tokens/min, concurrent, daily tokens,
-- tokens to reserve per minute (the estimate, at most the bucket). A limit of 0 is none. Then the key's spend
-- (SpendBudgets' arithmetic): counted (0/1), the month now, the daily and monthly budgets and the cost estimate, in
-- micro-dollars (a budget of 0 is none; the estimate is reserved in each budgeted period). It is checked first.
-- Last, the batch wanted: how many requests' worth to take at once (1: this request alone). More than one is taken
-- only when no concurrency and no spend is counted and every limit stays far from reached: each limit's part of the
-- batch is at most 1/64 of it and leaves at least a quarter of it free (BATCH_SHARE, BATCH_FILL); else this request
-- alone.
-- The hold's value is the day, and ':' and the batch taken when that is more than one (settle.lua gives back what
-- the batch did not use).
-- Returns {admitted, day, requests limit, remaining, reset us, tokens limit, remaining, reset us,
--          refusing scope, refusing limit (1 rpm, 2 tpm, 3 concurrent, 4 daily, 5 daily spend, 6 monthly spend),
--          wait ms, tokens used, requested, requests taken}; remaining and reset as left after the whole batch.
local W = 60000000
local DAY = 86400000
local KEEP = 172800000
-- A usage hash's expiry is pushed back to KEEP by the first admission an hour (or more) after it was last: a hash in
-- use never expires, and the other admissions save a call.
local REFRESH = 3600000
-- A month's spend outlives the month.
local SPEND_KEEP = 33 * DAY

local now = tonumber(ARGV[1])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local nowMs = math.floor(now / 1000)
local today = math.floor(nowMs / DAY)
local id = ARGV[2]
local leaseTtl = tonumber(ARGV[3])
local holdTtl = tonumber(ARGV[4])
local estimate = tonumber(ARGV[5])
local n = tonumber(ARGV[6])

-- Whole units a bucket of cap per minute refills in elapsed (> 0) microseconds.
local function refilled(elapsed, cap)
  return math.floor(elapsed / W) * cap + math.floor((elapsed % W) * cap / W)
end

-- Microseconds a bucket of cap per minute takes to refill units.
local function toRefill(units, cap, up)
  local p = units * W
  local q = math.floor(p / cap)
  if up and q * cap ~= p then
    q = q + 1
  end
  return q
end

-- The level (used, at) refilled up to now and read under cap.
local function level(used, at, cap)
  if used > cap then
    used = cap
  end
  if used <= 0 then
    return 0, now
  end
  local elapsed = now - at
  if elapsed <= 0 then
    return used, at
  end
  local r = refilled(elapsed, cap)
  if r >= used then
    return 0, now
  end
  return used - r, at + toRefill(r, cap, false)
end

local function bound(us)
  if us < 0 then
    return 0
  elseif us > W then
    return W
  end
  return us
end

local function untilFull(used, at, cap)
  if used <= 0 then
    return 0
  end
  return bound(toRefill(math.min(used, cap), cap, true) + at - now)
end

local function untilRoom(used, at, cost, cap)
  local missing = math.min(used, cap) - (cap - cost)
  if missing <= 0 then
    return 0
  end
  return bound(toRefill(missing, cap, true) + at - now)
end

-- The header families: the scope with the fewest remaining of each.
local rL, rRem, rReset, tL, tRem, tReset = 0, 0, 0, 0, 0, 0
local rBest, tBest = math.huge, math.huge
local function reportRequests(limit, remaining, reset)
  if remaining < rBest then
    rBest, rL, rRem, rReset = remaining, limit, remaining, reset
  end
end
local function reportTokens(limit, remaining, reset)
  if remaining < tBest then
    tBest, tL, tRem, tReset = remaining, limit, remaining, reset
  end
end

local function refuse(scope, code, wait, used, requested)
  return {0, today, rL, rRem, rReset, tL, tRem, tReset, scope, code, wait, used or 0, requested or 0, 0}
end

local sb = 6 + 5 * n
local spendKey, spendDay, spendMonth, month
if ARGV[sb + 1] == '1' then
  spendKey = KEYS[2 * n + 2]
  month = tonumber(ARGV[sb + 2])
  local dailyBudget, monthlyBudget = tonumber(ARGV[sb + 3]), tonumber(ARGV[sb + 4])
  local cost = tonumber(ARGV[sb + 5])
  local s = redis.call('HMGET', spendKey, 'sd', 'su', 'sm', 'mu')
  spendDay, spendMonth = 0, 0
  if tonumber(s[1]) == today then
    spendDay = tonumber(s[2]) or 0
  end
  if tonumber(s[3]) == month then
    spendMonth = tonumber(s[4]) or 0
  end
  -- Under budget rather than room for the estimate, as for the daily tokens.
  if dailyBudget > 0 then
    if spendDay >= dailyBudget then
      return refuse(0, 5, 0)
    end
    spendDay = spendDay + cost
  end
  if monthlyBudget > 0 then
    if spendMonth >= monthlyBudget then
      return refuse(0, 6, 0)
    end
    spendMonth = spendMonth + cost
  end
end

local writes = {}
for i = 1, n do
  local b = 6 + (i - 1) * 5
  local rpm, tpm = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2])
  local concurrent, daily = tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4])
  local reserve = tonumber(ARGV[b + 5])
  local w = {}
  local s = {}
  if rpm > 0 or tpm > 0 or daily > 0 then
    s = redis.call('HMGET', KEYS[2 * i - 1], 'ru', 'ra', 'tu', 'ta', 'dd', 'du', 'x')
  end
  if rpm > 0 then
    local used, at = level(tonumber(s[1]) or 0, tonumber(s[2]) or 0, rpm)
    if used > rpm - 1 then
      reportRequests(rpm, rpm - used, untilFull(used, at, rpm))
      return refuse(i, 1, math.max(1, math.ceil(untilRoom(used, at, 1, rpm) / 1000)))
    end
    w.ru, w.ra, w.rpm = used + 1, at, rpm
    reportRequests(rpm, rpm - used - 1, untilFull(used + 1, at, rpm))
  end
  if tpm > 0 then
    local used, at = level(tonumber(s[3]) or 0, tonumber(s[4]) or 0, tpm)
    if used > tpm - reserve then
      reportTokens(tpm, tpm - used, untilFull(used, at, tpm))
      return refuse(i, 2, math.max(1, math.ceil(untilRoom(used, at, reserve, tpm) / 1000)), used, reserve)
    end
    w.tu, w.ta, w.tpm, w.reserve = used + reserve, at, tpm, reserve
    reportTokens(tpm, tpm - used - reserve, untilFull(used + reserve, at, tpm))
  end
  if concurrent > 0 then
    -- Leases past their expiry belong to replicas that stopped renewing them (crashed): their slots are free.
    redis.call('ZREMRANGEBYSCORE', KEYS[2 * i], '-inf', nowMs)
    if redis.call('ZCARD', KEYS[2 * i]) >= concurrent then
      return refuse(i, 3, 1000)
    end
    w.lease = true
  end
  if daily > 0 then
    local used = 0
    if tonumber(s[5]) == today then
      used = tonumber(s[6]) or 0
    end
    -- Under budget rather than room for the estimate, as DailyBudget says why.
    if used >= daily then
      return refuse(i, 4, (today + 1) * DAY - nowMs)
    end
    w.du, w.daily = used + estimate, daily
  end
  w.x = s[7]
  writes[i] = w
end

-- The batch: the most requests' worth (up to the one wanted) that every limit can give while staying far from
-- reached; fewer than two is this request alone.
local take = 1
local want = tonumber(ARGV[sb + 6]) or 1
if want > 1 and not spendKey then
  local BATCH_SHARE, BATCH_FILL = 64, 0.75
  -- The most units of size each a limit gives, its level (after this request's one) at used.
  local function most(limit, used, each)
    if each <= 0 then
      return want
    end
    local byShare = math.floor(limit / BATCH_SHARE / each)
    local byFill = math.floor((math.floor(limit * BATCH_FILL) - used) / each) + 1
    return math.min(byShare, byFill)
  end
  take = want
  for i = 1, n do
    local w = writes[i]
    if w.lease then
      take = 1
      break
    end
    if w.ru then
      take = math.min(take, most(w.rpm, w.ru, 1))
    end
    if w.tu then
      take = math.min(take, most(w.tpm, w.tu, w.reserve))
    end
    if w.du then
      take = math.min(take, most(w.daily, w.du, estimate))
    end
  end
  if take < 2 then
    take = 1
  else
    -- The whole batch is counted now; the headers report what it leaves.
    local more = take - 1
    rBest, tBest = math.huge, math.huge
    for i = 1, n do
      local w = writes[i]
      if w.ru then
        w.ru = w.ru + more
        reportRequests(w.rpm, w.rpm - w.ru, untilFull(w.ru, w.ra, w.rpm))
      end
      if w.tu then
        w.tu = w.tu + more * w.reserve
        reportTokens(w.tpm, w.tpm - w.tu, untilFull(w.tu, w.ta, w.tpm))
      end
      if w.du then
        w.du = w.du + more * estimate
      end
    end
  end
end

local function put(h, field, value)
  h[#h + 1] = field
  h[#h + 1] = value
end

for i = 1, n do
  local w = writes[i]
  local usage = KEYS[2 * i - 1]
  -- One write per hash.
  local h = {}
  if w.ru then
    put(h, 'ru', w.ru)
    put(h, 'ra', w.ra)
  end
  if w.tu then
    put(h, 'tu', w.tu)
    put(h, 'ta', w.ta)
  end
  if w.du then
    put(h, 'dd', today)
    put(h, 'du', w.du)
  end
  if #h > 0 then
    -- No x: a new hash (or one from before x), which gets its expiry now.
    local x = tonumber(w.x)
    local refresh = not x or x > nowMs or nowMs - x >= REFRESH
    if refresh then
      put(h, 'x', nowMs)
    end
    redis.call('HSET', usage, unpack(h))
    if refresh then
      redis.call('PEXPIRE', usage, KEEP)
    end
  end
  if w.lease then
    redis.call('ZADD', KEYS[2 * i], nowMs + leaseTtl, id)
    redis.call('PEXPIRE', KEYS[2 * i], KEEP)
  end
end
if spendKey then
  redis.call('HSET', spendKey, 'sd', today, 'su', spendDay, 'sm', month, 'mu', spendMonth)
  redis.call('PEXPIRE', spendKey, SPEND_KEEP)
end
if take > 1 then
  redis.call('SET', KEYS[2 * n + 1], today .. ':' .. take, 'PX', holdTtl)
else
  redis.call('SET', KEYS[2 * n + 1], today, 'PX', holdTtl)
end
return {1, today, rL, rRem, rReset, tL, tRem, tReset, 0, 0, 0, 0, 0, take}
