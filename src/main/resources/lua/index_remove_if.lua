-- index_remove_if: drop a dead-letter index entry only if nobody re-scored it since it was read,
-- so a request that died again meanwhile stays listed.
-- KEYS[1] the index (zset)
-- ARGV[1] member
-- ARGV[2] the score it had when read
-- Returns 1 if removed, else 0.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
