-- Fences of one lcid.
--- @include "includes/keys"
--- @include "includes/clock"

-- Draws the next fence. Fences must never go backwards, even after every key of the lcid expired:
-- falling back to the clock in microseconds keeps it rising without a cross-slot global counter.
-- One SET ... GET (Redis 6.2+): the clock is nearly always ahead of the stored value, and only
-- when it is not (same microsecond, a clock step back) does a second SET store stored + 1.
local function next_fence(now_us)
  local stored = redis.call('SET', K_FENCE, num(now_us), 'GET')
  if stored and tonumber(stored) >= now_us then
    local f = tonumber(stored) + 1
    redis.call('SET', K_FENCE, num(f))
    return f
  end
  return now_us
end
