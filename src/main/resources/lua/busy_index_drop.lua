-- busy_index_drop: drop an lcid that a listing found idle from the busy index, unless a hint
-- re-scored it since the listing read it (it turned busy again meanwhile).
-- Runs on the tenant's busy index alone (its own slot), never on lcid keys.
-- KEYS[1] the busy index (zset)
-- KEYS[2] the versions of its entries (hash)
-- ARGV[1] lcid
-- ARGV[2] the score it had when read
-- Returns 1 if removed, else 0.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  redis.call('HDEL', KEYS[2], ARGV[1])
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
