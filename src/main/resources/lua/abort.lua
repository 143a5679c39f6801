-- abort: the holder gives up its active request or batch (optionally requeued), or a waiter withdraws.
-- KEYS: the lcid's keys (includes/store.lua: state, queue, due).
-- ARGV[1] requestId (with a token: any request of the active batch stands for the whole batch)
-- ARGV[2] token, '' when a waiter withdraws its queued request
-- ARGV[3] '1' to requeue the active request at the head of the queue, else '0'
-- ARGV[4] reason, '' for none
-- ARGV[5] max attempts
-- ARGV[6] result retention ms
-- ARGV[7] idle-key retention ms
-- ARGV[8] DEAD retention ms
-- ARGV[9] token for a wait request whose turn this abort grants (fresh, >= 128 random bits)
-- ARGV[10] pick-up window ms of that turn
-- Returns { 'RELEASED', pending, passedTo or false } | LOCK_LOST | NOT_QUEUED | NOT_FOUND. The
-- holder's abort releases the lock, or passes it to a wait request at the head (its turn).
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/stats"
--- @include "includes/requests"
--- @include "includes/lock"
--- @include "includes/recovery"
--- @include "includes/claim_index"
--- @include "includes/expiry"
--- @include "includes/turns"
--- @include "includes/batch"
local rid, token, requeue, reason = ARGV[1], ARGV[2], ARGV[3] == '1', ARGV[4]
local max_attempts, keep, idle, dead_keep = tonumber(ARGV[5]), ARGV[6], ARGV[7], ARGV[8]
local turn_token, pickup = ARGV[9], ARGV[10]
local now, now_us = clock()
prefetch({ 'lock', 'm:' .. rid, 'fence', 'seq', 'pd', 'xd' })
prune(now)

local reply
local m = get_meta(rid)

if token ~= '' then
  local l = live_lock(now)
  local active = l and l.token == token and active_rids(l)
  if active and m and contains(active, rid) then
    -- Any request of a batch stands for the whole batch. Requeued last first, so that the batch
    -- stands at the head in its order.
    local why = reason ~= '' and reason or 'aborted by holder'
    local metas = {}
    for i = #active, 1, -1 do
      local r = active[i]
      local am = r == rid and m or get_meta(r)
      metas[i] = am
      am.abt = token
      am.by = 'holder'
      if requeue then
        requeue_or_dead(r, am, why, now, max_attempts, dead_keep)
      else
        am.why = why
        finish(r, am, 'ABORTED', now, keep)
      end
    end
    -- Released with handoff work waiting: claimable right away (pass_on tells the claim index).
    local pending, passed = pass_on(turn_token, now, now_us, pickup)
    for i, r in ipairs(active) do
      metas[i].pend, metas[i].pt = tostring(pending), passed
      put_meta(r, metas[i])
    end
    reply = { 'RELEASED', pending, passed }
  elseif m and m.abt == token then
    reply = { 'RELEASED', tonumber(m.pend), m.pt or false }
  else
    reply = { 'LOCK_LOST' }
  end
elseif not m then
  reply = { 'NOT_FOUND' }
elseif m.s == 'QUEUED' then
  redis.call('LREM', K_QUEUE, '1', rid)
  m.by = 'waiter'
  m.why = reason ~= '' and reason or 'withdrawn'
  finish(rid, m, 'ABORTED', now, keep)
  reply = { 'RELEASED', redis.call('LLEN', K_QUEUE), false }
elseif m.s == 'ABORTED' and m.by == 'waiter' then
  reply = { 'RELEASED', redis.call('LLEN', K_QUEUE), false }
else
  reply = { 'NOT_QUEUED', m.s, m.a }
end

settle(idle, now, now_us)
return with_stats(reply)
