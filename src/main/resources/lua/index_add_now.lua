-- index_add_now: add a member to a cross-lcid index, scored with the Redis clock (ms), the
-- clock every lease and retention is judged by.
-- Runs on the index key alone (its own slot), never on lcid keys.
-- KEYS[1] the index (zset of members scored by ms)
-- ARGV[1] member
-- Returns the score written.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
return now
