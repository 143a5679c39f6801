-- Idle lcids expire; busy ones never do.
--- @include "includes/keys"
--- @include "includes/clock"
--- @include "includes/busy_index"

-- Idle lcids expire, but not before the last record they keep (results, DEAD requests) is due;
-- an lcid with a holder or waiting work never expires, so nothing acknowledged is silently dropped.
local function expire_idle(idle, now, now_us)
  busy_hint(0, now_us)
  local ttl = idle
  local last = redis.call('ZRANGE', K_PURGE, '-1', '-1', 'WITHSCORES')
  if last[2] then ttl = math.max(idle, tonumber(last[2]) - now) end
  local ttl_s = num(ttl)
  redis.call('PEXPIRE', K_REQS, ttl_s)
  redis.call('PEXPIRE', K_FENCE, ttl_s)
  redis.call('PEXPIRE', K_PURGE, ttl_s)
end

-- fence_drawn: a fence was drawn in this script, whose SET already took the fence key's TTL away.
local function persist_busy(fence_drawn)
  redis.call('PERSIST', K_REQS)
  if not fence_drawn then redis.call('PERSIST', K_FENCE) end
  redis.call('PERSIST', K_PURGE)
end

-- After a state change: was_idle says whether the lcid was idle before it (nil: not known).
-- A busy lcid that stays busy has no TTL to change.
local function touch(idle, now, now_us, was_idle)
  if redis.call('EXISTS', K_LOCK) == 0 and redis.call('LLEN', K_QUEUE) == 0 then
    expire_idle(idle, now, now_us)
  elseif was_idle ~= false then
    persist_busy()
  end
end
