-- acquire: take the lock for a request, queue it behind a live holder, or rescue a stranded queue.
-- KEYS: the lcid's keys (includes/keys.lua: lock, queue, requests, fence, purge).
-- ARGV[1] requestId
-- ARGV[2] token to hand out if this call is granted the lock (fresh, >= 128 random bits)
-- ARGV[3] leaseMs
-- ARGV[4] payload JSON, '' for none
-- ARGV[5] queue bound
-- ARGV[6] max attempts
-- ARGV[7] result retention ms
-- ARGV[8] idle-key retention ms
-- ARGV[9] DEAD retention ms
-- Returns ACQUIRED | QUEUED | NEXT | QUEUE_FULL | DUPLICATE_REQUEST.
--- @include "includes/keys"
--- @include "includes/clock"
--- @include "includes/stats"
--- @include "includes/requests"
--- @include "includes/recovery"
--- @include "includes/fence"
--- @include "includes/grant"
--- @include "includes/replies"
--- @include "includes/expiry"
local rid, token, lease, payload = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local qmax, max_attempts, keep, idle = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local dead_keep = tonumber(ARGV[9])
-- No prune here: every request ends through complete, abort or claim, and they prune.
local now, now_us = clock()

-- A new request's meta; written by the caller once its state is settled (one write, not two).
local function create(state)
  local m = { s = state, a = 1, qt = num(now), p = payload ~= '' and 1 or 0 }
  if payload ~= '' then redis.call('HSET', K_REQS, 'p:' .. rid, payload) end
  return m
end

local reply
local l, had_lock = recover_orphan(now, max_attempts, dead_keep)
local m = get_meta(rid)
local qlen = redis.call('LLEN', K_QUEUE)
local was_idle = not had_lock and qlen == 0

if l then
  if m then
    -- (caller: the field's name in locks granted before it was renamed acq_rid.)
    if (l.acq_rid or l.caller) == rid and l.via == 'acquire' then
      -- A retry of the call that was granted this lock: the same grant again.
      if l.rid == rid then reply = acquired_reply(l)
      else reply = next_reply(l, get_meta(l.rid), l.rid) end
    elseif m.s == 'QUEUED' then
      reply = { 'QUEUED', position(rid), qlen }
    else
      reply = duplicate_reply(rid, m)
    end
  elseif qlen >= qmax then
    reply = { 'QUEUE_FULL', qlen }
  else
    put_meta(rid, create('QUEUED'))
    qlen = redis.call('RPUSH', K_QUEUE, rid)
    reply = { 'QUEUED', qlen, qlen }
  end
elseif m and m.s ~= 'QUEUED' then
  reply = duplicate_reply(rid, m)
elseif qlen == 0 then
  m = create('ACTIVE')
  local fence = next_fence(now_us)
  activate(rid, m, fence, now)
  reply = acquired_reply(grant(token, rid, fence, now, now_us, lease, rid, 'acquire'))
elseif not m and qlen >= qmax then
  reply = { 'QUEUE_FULL', qlen }
else
  -- Lock free but work is waiting: keep FIFO, and make this caller the one who drains it.
  if not m then
    put_meta(rid, create('QUEUED'))
    redis.call('RPUSH', K_QUEUE, rid)
  end
  local head = redis.call('LPOP', K_QUEUE)
  local hm = get_meta(head)
  local fence = next_fence(now_us)
  activate(head, hm, fence, now)
  reply = next_reply(grant(token, head, fence, now, now_us, lease, rid, 'acquire'), hm, head)
end

-- After a grant the lcid is busy; with a live holder it was busy and still is: no TTL to change.
if reply[1] == 'ACQUIRED' or reply[1] == 'NEXT' then
  if was_idle then persist_busy() end
elseif not l then
  touch(idle, now, was_idle)
end
return with_stats(reply)
