-- What a state-changing script did besides its answer, for the service's metrics and its
-- cross-lcid indexes (claims, dead letters), which live in other slots and so cannot be written
-- here. with_stats(reply) appends it as the reply's last element, in the order of the components
-- of redis/ScriptStats.java: { requeued, dead, queue wait ms or -1, hold ms or -1,
-- claim index score or -1, the requestIds it declared DEAD (comma-separated) or false, claim index version or false, turns ended by
-- PICKUP_TIMEOUT, busy index: since (ms) or 0 (idle) or -1 (no change), busy index version or false,
-- a renewed lease: how long it had run (ms) or -1, and its length (ms) or -1 }. Numbers that can exceed 14 digits are kept as strings because cjson would
-- round them.

local stats = { requeued = 0, dead = 0, waited = -1, held = -1, index_at = -1, dead_rid = false, index_seq = false,
  pickup_timeouts = 0, busy = -1, busy_version = false, renewed_after = -1, renewed_lease = -1 }

local function with_stats(reply)
  reply[#reply + 1] = { stats.requeued, stats.dead, stats.waited, stats.held, stats.index_at, stats.dead_rid,
    stats.index_seq, stats.pickup_timeouts, stats.busy, stats.busy_version, stats.renewed_after, stats.renewed_lease }
  return reply
end
