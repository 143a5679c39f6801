-- Handing the lock, and a request, to a holder.
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/lock"
--- @include "includes/requests"
--- @include "includes/claim_index"
--- @include "includes/busy_index"

-- Writes the lock (includes/lock.lua) and answers it as read_lock would now read it, so replies
-- need no second read. lease: its length in ms, a string as the service sent it. acq_rid: the
-- requestId whose acquire is granted this lock ('' for handoffs and claims), so a retry of that
-- acquire gets the same answer. pk: '0' for a wait request's turn that its submitter has not
-- picked up yet (lease = the pick-up window), else '1'. batch: the requestIds of a batch of more
-- than one, comma-separated, rid first (active_rids); '' or nil for one request. Always written,
-- so a handoff never inherits the previous holder's batch.
local function grant(token, rid, fence, now, now_us, lease, acq_rid, via, pk, batch)
  local previous = via == 'complete' and read_lock()
  local l = { token = token, rid = rid, fence = num(fence), t = num(now), lease = lease, exp = now + lease,
    acq_rid = acq_rid, via = via, pk = pk or '1', b = batch or '' }
  if previous then
    -- A handoff: the same holder, so the lock keeps hs, when that holder got it.
    l.hs = previous.hs
  else
    l.hs = l.t
    -- If this holder dies, the lcid needs rescue when its lease ends: tell the claim index. A
    -- handoff keeps the earlier hint, which is harmless: too early only costs the claim a look.
    index_hint(l.exp, now_us)
    busy_hint(now, now_us)
  end
  write_lock(l)
  return l
end

-- Makes rid the active request under the lock.
local function activate(rid, m, fence, now)
  if m.s == 'QUEUED' and m.qt then stats.waited = now - m.qt end
  m.s = 'ACTIVE'
  m.f = num(fence)
  m.at = num(now)
  put_meta(rid, m)
end
