-- index_due: entries of a cross-lcid index whose score (ms, Redis clock) has come. Changes nothing.
-- Runs on the index key alone (its own slot), never on lcid keys.
-- KEYS[1] the index (zset of members scored by ms)
-- ARGV[1] how many at most
-- Returns { member, score, member, score, ... }, oldest first.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
