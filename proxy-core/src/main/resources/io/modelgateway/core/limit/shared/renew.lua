-- Shared limits: renews the concurrency leases of exchanges still running on this replica.
-- KEYS[i]: a lease set; ARGV: now in microseconds (negative: TIME), the lease ttl in ms, then ARGV[2 + i]: the
-- admission id holding a lease in KEYS[i]. A lease already expired stays expired: its slot may have been given to
-- another exchange meanwhile, and reviving it would put one more in flight than the limit.
-- Returns how many leases were renewed.
local KEEP = 172800000
local now = tonumber(ARGV[1])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local nowMs = math.floor(now / 1000)
local ttl = tonumber(ARGV[2])
local renewed = 0
for i = 1, #KEYS do
  local expiry = tonumber(redis.call('ZSCORE', KEYS[i], ARGV[2 + i]))
  if expiry and expiry > nowMs then
    redis.call('ZADD', KEYS[i], nowMs + ttl, ARGV[2 + i])
    redis.call('PEXPIRE', KEYS[i], KEEP)
    renewed = renewed + 1
  end
end
return renewed
