-- Hints for the tenant's claim index (redis/IndexStore.java writes them after the script).
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/stats"

-- The claim index (another slot, written by the service after the script) may receive hints out
-- of order: batched, from two connections or two replicas. Each hint therefore carries a
-- version that rises with every change that hints, also across key expiry (as fences do), and
-- the index keeps the newest version's hint: the grant's "look when the lease ends" can never
-- overwrite a later abort's "look now".
local function index_hint(at, now_us)
  local stored = hget('seq')
  local seq = now_us
  if stored and tonumber(stored) >= now_us then seq = tonumber(stored) + 1 end
  seq = num(seq)
  hset('seq', seq)
  stats.index_at = at
  stats.index_seq = seq
end

-- The version of what a reader sees now: at least every hint already given, below every later one.
local function index_version(now_us)
  return hget('seq') or num(now_us)
end
