-- claim_index_drop: remove an idle lcid from the claim index, unless a newer hint arrived since
-- the claim that found it idle looked (a new grant meanwhile must stay indexed).
-- Runs on the tenant's claim index alone (its own slot), never on lcid keys.
-- KEYS[1] the claim index (zset: lcid -> ms when to look at it)
-- KEYS[2] the versions of its entries (hash: lcid -> version)
-- ARGV[1] lcid
-- ARGV[2] the index version the claim saw on the lcid (includes/claim_index.lua index_version)
-- Returns 1 if removed, else 0.
local held = redis.call('HGET', KEYS[2], ARGV[1])
if held and tonumber(held) > tonumber(ARGV[2]) then
  return 0
end
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
