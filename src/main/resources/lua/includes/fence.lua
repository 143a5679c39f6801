-- Fences of one lcid.
--- @include "includes/keys"
--- @include "includes/clock"

-- Fences must never go backwards, even after every key of the lcid expired: falling back to
-- the clock in microseconds keeps them rising without a cross-slot global counter.
local function next_fence(now_us)
  local stored = tonumber(redis.call('GET', K_FENCE) or '0')
  local f = math.max(stored + 1, now_us)
  redis.call('SET', K_FENCE, num(f))
  return f
end
