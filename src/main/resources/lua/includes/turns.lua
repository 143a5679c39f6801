-- Wait-mode requests (protocol v1.1): they keep their place in the FIFO queue but are never
-- handed to another holder; when one reaches the head and the lock is free of its predecessor,
-- the lock is granted to it (its turn), and its submitter picks it up by repeating its acquire.
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/requests"
--- @include "includes/lock"
--- @include "includes/fence"
--- @include "includes/grant"
--- @include "includes/claim_index"
--- @include "includes/busy_index"

local function is_wait(m)
  return m ~= nil and m.md == 'w'
end

-- The lease a wait request asked for (ms, a string), counted from its pick-up.
local function wait_lease(m, default)
  return m.ls or default
end

-- Grants the lock to rid (a wait request just taken off the head) as its turn: a new token and
-- fence, and until its submitter picks it up, a lease of the pick-up window (then the claim
-- index looks at it, and whoever runs a script on the lcid ends an unclaimed turn). Wakes the
-- submitter's long-poll, which picks the turn up.
local function grant_turn(rid, m, token, now, now_us, pickup)
  local fence = next_fence(now_us)
  activate(rid, m, fence, now)
  local l = grant(token, rid, fence, now, now_us, pickup, rid, 'turn', '0')
  wake(rid)
  return l
end

-- The first repeat of a wait request's acquire after its turn was granted picks it up: its own
-- lease counts from now. Later repeats change nothing.
local function pick_up(l, m, now)
  if l.pk == '0' then
    local lease = wait_lease(m, l.lease)
    l.t, l.lease, l.exp, l.pk = num(now), lease, now + lease, '1'
    write_lock(l)
  end
  return l
end

-- A holder is done and was handed no work: a wait request at the head gets its turn, else the
-- lock is released (claimable at once when handoff requests wait). Answers the requests still
-- QUEUED and the requestId the lock was passed to, or false. empty: the caller just saw the
-- queue empty (no need to look again).
local function pass_on(token, now, now_us, pickup, empty)
  if empty then
    clear_lock()
    return 0, false
  end
  local head = redis.call('LINDEX', K_QUEUE, '0')
  if head then
    local hm = get_meta(head)
    if is_wait(hm) then
      redis.call('LPOP', K_QUEUE)
      grant_turn(head, hm, token, now, now_us, pickup)
      return redis.call('LLEN', K_QUEUE), head
    end
  end
  clear_lock()
  local pending = redis.call('LLEN', K_QUEUE)
  if pending > 0 then
    index_hint(now, now_us)
    busy_hint(now, now_us)
  end
  return pending, false
end
