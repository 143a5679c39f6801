-- index_drop_older: remove the entries of a cross-lcid index scored more than an age ago
-- (Redis clock), e.g. dead letters past their retention.
-- Runs on the index key alone (its own slot), never on lcid keys.
-- KEYS[1] the index (zset of members scored by ms)
-- ARGV[1] age in ms
-- Returns how many entries were removed.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[1])))
