-- Idle lcids expire; busy ones never do.
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/lock"
--- @include "includes/busy_index"

-- Ends a script that may have changed whether the lcid is busy (a lock, even one whose lease ran
-- out, or queued work): writes the state hash (flush), then gives both keys that outlive a request
-- a TTL when the lcid is idle, and takes it away when the lcid is busy. An idle lcid expires, but
-- not before the last record it keeps (results, DEAD requests) is due (field xd); a busy one never
-- does, so nothing acknowledged is silently dropped. idle: the idle-key retention ms (a string, as
-- the service sent it). was_busy: whether the lcid was busy before the script, or nil when not
-- known; qlen: the queue's length now, or nil when not known.
local function settle(idle, now, now_us, was_busy, qlen)
  flush()
  if has_lock() or (qlen or redis.call('LLEN', K_QUEUE)) > 0 then
    if not was_busy then
      redis.call('PERSIST', K_STATE)
      redis.call('PERSIST', K_DUE)
    end
    return
  end
  busy_hint(0, now_us)
  local last_due = hget('xd')
  if last_due and tonumber(last_due) > now + idle then
    redis.call('PEXPIREAT', K_STATE, last_due)
    redis.call('PEXPIREAT', K_DUE, last_due)
  else
    redis.call('PEXPIRE', K_STATE, idle)
    redis.call('PEXPIRE', K_DUE, idle)
  end
end
