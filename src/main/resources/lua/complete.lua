-- complete: the active request is DONE; hand the lock to the next queued request or release it.
-- KEYS: the lcid's keys (includes/keys.lua: lock, queue, requests, fence, purge).
-- ARGV[1] token
-- ARGV[2] requestId being completed
-- ARGV[3] result JSON, '' for none
-- ARGV[4] result retention ms
-- ARGV[5] idle-key retention ms
-- Returns NEXT | RELEASED | LOCK_LOST.
--- @include "includes/keys"
--- @include "includes/clock"
--- @include "includes/stats"
--- @include "includes/requests"
--- @include "includes/lock"
--- @include "includes/fence"
--- @include "includes/grant"
--- @include "includes/replies"
--- @include "includes/expiry"
local token, rid, result = ARGV[1], ARGV[2], ARGV[3]
local keep, idle = tonumber(ARGV[4]), tonumber(ARGV[5])
local now, now_us = clock()
prune(now)

local reply
local l = live_lock(now)
local m = get_meta(rid)

if l and l.token == token and l.rid == rid and m then
  m.tok = token
  if result ~= '' then redis.call('HSET', K_REQS, 'r:' .. rid, result) end
  local nxt = redis.call('LPOP', K_QUEUE)
  if nxt then
    -- Handoff: same token, new fence, fresh lease; the lock is never free in between.
    m.nx = nxt
    finish(rid, m, 'DONE', now, keep)
    local nm = get_meta(nxt)
    local fence = next_fence(now_us)
    activate(nxt, nm, fence, now)
    reply = next_reply(grant(token, nxt, fence, now, now_us, tonumber(l.lease), '', 'complete'), nm, nxt)
  else
    m.nx = ''
    finish(rid, m, 'DONE', now, keep)
    redis.call('DEL', K_LOCK)
    -- No holder, empty queue: the lcid is idle now.
    expire_idle(idle, now)
    reply = { 'RELEASED', 0 }
  end
elseif m and m.s == 'DONE' and m.tok == token then
  -- A retry of a complete that already happened: answer as the first time, pop nothing.
  if m.nx == '' then
    reply = { 'RELEASED', 0 }
  elseif l and l.token == token and l.rid == m.nx then
    reply = next_reply(l, get_meta(m.nx), m.nx)
  else
    reply = { 'LOCK_LOST' }
  end
else
  reply = { 'LOCK_LOST' }
end

-- Every other path leaves the lcid busy as it was, or changes nothing.
return with_stats(reply)
