-- Fences of one lcid.
--- @include "includes/store"
--- @include "includes/clock"

-- Draws the next fence. Fences must never go backwards, even after every key of the lcid expired:
-- falling back to the clock in microseconds keeps it rising without a cross-slot global counter.
-- The clock is nearly always ahead of the stored fence; only when it is not (same microsecond, a
-- clock step back) is the fence the stored one + 1.
local function next_fence(now_us)
  local stored = hget('fence')
  local fence = now_us
  if stored and tonumber(stored) >= now_us then fence = tonumber(stored) + 1 end
  hset('fence', num(fence))
  return fence
end
