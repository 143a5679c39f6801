-- busy_index_set: write busy-index hints, each only if it is newer than what the index holds.
-- Runs on the tenant's busy index alone (its own slot), never on lcid keys. Hints come from the
-- lcid scripts (their stats tail, includes/busy_index.lua) and may arrive in any order (batched,
-- over several connections, from several replicas), so the newest version wins: a late "idle"
-- never drops an lcid that is busy again, nor a late hint replaces a newer holder's.
-- KEYS[1] the busy index (zset: lcid -> ms since when its holder has held it, or it has had work and no holder)
-- KEYS[2] the versions of its entries (hash: lcid -> version of the hint that set it)
-- ARGV    triples: lcid, since ms ('0': the lcid turned idle), version (decimal strings)
-- Returns how many hints were written.
local written = 0
for i = 1, #ARGV, 3 do
  local lcid, since, version = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local held = redis.call('HGET', KEYS[2], lcid)
  if not held or tonumber(version) > tonumber(held) then
    if since == '0' then
      -- The version goes too: idle lcids must cost the index nothing. A late "busy" older than
      -- this "idle" may then come back in; the listing finds that lcid idle and drops it.
      redis.call('ZREM', KEYS[1], lcid)
      redis.call('HDEL', KEYS[2], lcid)
    else
      redis.call('ZADD', KEYS[1], since, lcid)
      redis.call('HSET', KEYS[2], lcid, version)
    end
    written = written + 1
  end
end
return written
