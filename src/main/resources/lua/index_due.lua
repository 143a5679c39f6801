-- index_due: entries of a cross-lcid index whose score (ms, Redis clock) has come. Changes nothing.
-- Runs on the index key alone (its own slot), never on lcid keys.
-- KEYS[1] the index (zset of members scored by ms)
-- ARGV[1] how many at most
-- ARGV[2] optional: only members that start with this prefix (compared as bytes, no pattern)
-- ARGV[3] with a prefix: how many due entries to look through at most
-- Returns { member, score, member, score, ... }, oldest first.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local want = tonumber(ARGV[1])
local prefix = ARGV[2]
if not prefix or prefix == '' then
  return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, want)
end
-- A zset ordered by time cannot be searched by prefix, so due entries are read in pages, oldest
-- first, up to a bound that keeps one call's cost on Redis fixed however much other work is due.
local scan, page, n = tonumber(ARGV[3]), 100, #prefix
local found, seen = {}, 0
while seen < scan and #found < want * 2 do
  local batch = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', seen, math.min(page, scan - seen))
  for i = 1, #batch, 2 do
    if string.sub(batch[i], 1, n) == prefix then
      found[#found + 1] = batch[i]
      found[#found + 1] = batch[i + 1]
      if #found >= want * 2 then break end
    end
  end
  seen = seen + #batch / 2
  if #batch < page * 2 then break end
end
return found
