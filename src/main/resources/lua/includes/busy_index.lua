-- Hints for the tenant's busy index (redis/IndexStore.java writes them after the script): which
-- lcids are busy, and since when their holder has held the lock, for operators
-- (GET /v1/busy-locks). Given where the holder changes (a grant with a new token, work left with
-- no holder) and where the lcid turns idle; a handoff keeps its holder and its place.
--- @include "includes/clock"
--- @include "includes/stats"

-- since: when (ms) the lcid's new holder got the lock, or when it was left with work and no holder;
-- 0: the lcid turned idle. The version is the script's Redis TIME in µs: scripts run one at a
-- time, so a later change always carries a larger version, and the index keeps the newest.
local function busy_hint(since, now_us)
  stats.busy = since
  stats.busy_version = num(now_us)
end
