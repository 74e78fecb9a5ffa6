-- Shared spend: one key's spend now, as admit.lua keeps it (KEYS[1]: the key's spend hash).
-- ARGV: now in microseconds (negative: the server's TIME), the month now (months since 1970-01).
-- Returns {micro-dollars spent today, micro-dollars spent this month}.
local DAY = 86400000
local now = tonumber(ARGV[1])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local today = math.floor(math.floor(now / 1000) / DAY)
local month = tonumber(ARGV[2])
local s = redis.call('HMGET', KEYS[1], 'sd', 'su', 'sm', 'mu')
local day, mon = 0, 0
if tonumber(s[1]) == today then
  day = tonumber(s[2]) or 0
end
if tonumber(s[3]) == month then
  mon = tonumber(s[4]) or 0
end
return {day, mon}
