-- Requests whose holder gave up or vanished: back to the queue, or DEAD.
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/stats"
--- @include "includes/requests"
--- @include "includes/lock"

-- Back to the head of the queue for another attempt, or DEAD once attempts are used up.
-- DEAD records are kept for dead_keep ms (with their payload) so they can be listed and retried.
local function requeue_or_dead(rid, m, reason, now, max_attempts, dead_keep)
  m.why = reason
  if tonumber(m.a) >= max_attempts then
    finish(rid, m, 'DEAD', now, dead_keep)
    return 'DEAD'
  end
  m.a = tostring(m.a + 1)
  m.s = 'QUEUED'
  m.qt = num(now)
  stats.requeued = stats.requeued + 1
  put_meta(rid, m)
  redis.call('LPUSH', K_QUEUE, rid)
  return 'QUEUED'
end

-- Before any grant: a holder whose lease ran out loses its request (or batch) back to the queue; a wait
-- request whose turn was not picked up in time ends ABORTED (PICKUP_TIMEOUT), so a submitter
-- that went away never holds the others up for longer than the pick-up window.
-- Answers the live lock (or nil) and whether the lcid had a lock at all.
local function recover_orphan(now, max_attempts, dead_keep, keep)
  local l = read_lock()
  if not l then return nil, false end
  if l.exp > now then return l, true end
  local m = get_meta(l.rid)
  if l.pk == '0' then
    if m and m.s == 'ACTIVE' then
      m.why = 'PICKUP_TIMEOUT'
      stats.pickup_timeouts = stats.pickup_timeouts + 1
      finish(l.rid, m, 'ABORTED', now, keep)
    end
  else
    -- A whole batch goes back, last first, so that it stands at the head in its order.
    local rids = active_rids(l)
    for i = #rids, 1, -1 do
      local am = i == 1 and m or get_meta(rids[i])
      if am and am.s == 'ACTIVE' then requeue_or_dead(rids[i], am, 'lease expired', now, max_attempts, dead_keep) end
    end
  end
  clear_lock()
  return nil, true
end
