-- claim_index_set: write claim-index hints, each only if it is not older than what the index holds.
-- Runs on the tenant's claim index alone (its own slot), never on lcid keys. Hints come from the
-- lcid scripts (their stats tail) and from claims that looked at an lcid; they may arrive in any
-- order (batched, over several connections, from several replicas), so the newest version wins,
-- not the last write: an abort's "look now" is never replaced by its grant's "look at lease end".
-- KEYS[1] the claim index (zset: lcid -> ms, Redis clock, when to look at it)
-- KEYS[2] the versions of its entries (hash: lcid -> version of the hint that set the score)
-- ARGV    triples: lcid, score ms, version (decimal strings; versions rise per lcid, includes/claim_index.lua index_hint)
-- Returns how many hints were written.
local written = 0
for i = 1, #ARGV, 3 do
  local lcid, score, version = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local held = redis.call('HGET', KEYS[2], lcid)
  -- Equal versions saw the same hinting change; the later look (e.g. a re-score after a lease
  -- was renewed) is at least as current, so it may replace the earlier one.
  if not held or tonumber(version) >= tonumber(held) then
    redis.call('ZADD', KEYS[1], score, lcid)
    redis.call('HSET', KEYS[2], lcid, version)
    written = written + 1
  end
end
return written
