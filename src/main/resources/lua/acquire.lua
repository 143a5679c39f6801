-- acquire: take the lock for a request, queue it behind a live holder, or rescue a stranded queue.
-- KEYS: the lcid's keys (includes/store.lua: state, queue, due).
-- ARGV[1] requestId
-- ARGV[2] token to hand out if this call is granted the lock (fresh, >= 128 random bits)
-- ARGV[3] leaseMs
-- ARGV[4] payload JSON, '' for none
-- ARGV[5] queue bound
-- ARGV[6] max attempts
-- ARGV[7] result retention ms
-- ARGV[8] idle-key retention ms
-- ARGV[9] DEAD retention ms
-- ARGV[10] mode of a new request: 'handoff' (any holder may do it) or 'wait' (only its submitter)
-- ARGV[11] pick-up window ms of a wait request's turn
-- ARGV[12] take: how many queued handoff requests a rescue hands this caller at most (1 to 100)
-- ARGV[13] W3C traceparent of the submitting call, '' for none; ARGV[14] its tracestate, '' for none
-- Returns ACQUIRED | QUEUED | NEXT | QUEUE_FULL | DUPLICATE_REQUEST. A repeat is answered from the
-- stored request: its mode, lease, payload and trace context are not changed by the repeat.
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/stats"
--- @include "includes/requests"
--- @include "includes/recovery"
--- @include "includes/fence"
--- @include "includes/grant"
--- @include "includes/replies"
--- @include "includes/expiry"
--- @include "includes/turns"
--- @include "includes/batch"
local rid, token, lease, payload = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local qmax, max_attempts, keep, idle = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7], ARGV[8]
local dead_keep, wait_mode, pickup, take = ARGV[9], ARGV[10] == 'wait', ARGV[11], tonumber(ARGV[12])
local traceparent, tracestate = ARGV[13], ARGV[14]
-- No prune here: every request ends through complete, abort or claim, and they prune.
local now, now_us = clock()
prefetch({ 'lock', 'm:' .. rid, 'fence', 'seq' })

-- A new request's meta; written by the caller once its state is settled (one write, not two).
local function create(state)
  local m = { s = state, a = '1', qt = num(now), p = payload ~= '' and '1' or '0' }
  if wait_mode then
    m.md = 'w'
    m.ls = lease
  end
  -- Handed out with the request (NEXT, a turn, a claim), so the holder's work can link to it.
  if traceparent ~= '' then
    m.tp = traceparent
    if tracestate ~= '' then m.ts = tracestate end
  end
  if payload ~= '' then hset('p:' .. rid, payload) end
  return m
end

local reply
local l, had_lock = recover_orphan(now, max_attempts, dead_keep, keep)
local m = get_meta(rid)
local qlen = redis.call('LLEN', K_QUEUE)
local was_busy = had_lock or qlen > 0

if l then
  if m then
    if l.acq_rid == rid and l.via == 'acquire' then
      -- A retry of the call that was granted this lock: the same grant again.
      if l.rid == rid then reply = acquired_reply(l, m)
      else reply = next_reply(l) end
    elseif l.rid == rid and l.via == 'turn' then
      -- A wait request's turn: picked up by this repeat, or answered again as picked up.
      reply = acquired_reply(pick_up(l, m, now), m)
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
  reply = acquired_reply(grant(token, rid, fence, now, now_us, lease, rid, 'acquire'), m)
elseif not m and qlen >= qmax then
  reply = { 'QUEUE_FULL', qlen }
else
  -- Lock free but work is waiting: keep FIFO. The caller's request goes to the tail (or stays
  -- where it is), then the head decides: a wait request there gets its turn (picked up at once
  -- when it is the caller's own); a handoff request there is handed to a handoff caller, who
  -- drains the queue (up to take of them at once), while a wait caller never takes others' work and just waits.
  if not m then
    m = create('QUEUED')
    put_meta(rid, m)
    redis.call('RPUSH', K_QUEUE, rid)
  end
  local head = redis.call('LINDEX', K_QUEUE, '0')
  local hm = get_meta(head)
  if is_wait(hm) then
    redis.call('LPOP', K_QUEUE)
    if head == rid then
      local fence = next_fence(now_us)
      activate(rid, hm, fence, now)
      reply = acquired_reply(grant(token, rid, fence, now, now_us, wait_lease(hm, lease), rid, 'turn'), hm)
    else
      grant_turn(head, hm, token, now, now_us, pickup)
      reply = { 'QUEUED', position(rid), redis.call('LLEN', K_QUEUE) }
    end
  elseif is_wait(m) then
    reply = { 'QUEUED', position(rid), redis.call('LLEN', K_QUEUE) }
  else
    local rids, metas, fence = take_batch(take, now, now_us)
    reply = next_reply(grant(token, rids[1], fence, now, now_us, lease, rid, 'acquire', '1', batch_field(rids)),
      metas)
  end
end

settle(idle, now, now_us, was_busy)
return with_stats(reply)
