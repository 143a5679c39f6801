-- complete: the active request is DONE; hand the next queued request to the holder (NEXT), pass
-- the lock to a wait request at the head (its turn), or release it. The holder is handed a
-- handoff request only when it can do any request: it held a handoff request, or sent take.
-- KEYS: the lcid's keys (includes/keys.lua: lock, queue, requests, fence, purge).
-- ARGV[1] token
-- ARGV[2] requestId being completed
-- ARGV[3] result JSON, '' for none
-- ARGV[4] result retention ms
-- ARGV[5] idle-key retention ms
-- ARGV[6] '1' when the holder takes queued handoff requests (take), else '0'
-- ARGV[7] token for a wait request whose turn this complete grants (fresh, >= 128 random bits)
-- ARGV[8] pick-up window ms of that turn
-- Returns NEXT | { 'RELEASED', pending, passedTo or false } | LOCK_LOST.
--- @include "includes/keys"
--- @include "includes/clock"
--- @include "includes/stats"
--- @include "includes/requests"
--- @include "includes/lock"
--- @include "includes/fence"
--- @include "includes/grant"
--- @include "includes/replies"
--- @include "includes/expiry"
--- @include "includes/turns"
local token, rid, result = ARGV[1], ARGV[2], ARGV[3]
local keep, idle, take, turn_token, pickup = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6] == '1', ARGV[7],
  tonumber(ARGV[8])
local now, now_us = clock()
prune(now)

local reply
local l = live_lock(now)
local m = get_meta(rid)

if l and l.token == token and l.rid == rid and m then
  m.tok = token
  if result ~= '' then redis.call('HSET', K_REQS, 'r:' .. rid, result) end
  local nxt = redis.call('LINDEX', K_QUEUE, 0)
  local nm = nxt and get_meta(nxt)
  if nxt and (take or not is_wait(m)) and not is_wait(nm) then
    -- Handoff: same token, new fence, fresh lease; the lock is never free in between.
    redis.call('LPOP', K_QUEUE)
    m.nx = nxt
    finish(rid, m, 'DONE', now, keep)
    local fence = next_fence(now_us)
    activate(nxt, nm, fence, now)
    reply = next_reply(grant(token, nxt, fence, now, now_us, tonumber(l.lease), '', 'complete'), nm, nxt)
  else
    local pending, passed = pass_on(turn_token, now, now_us, pickup)
    m.nx, m.pend, m.pt = '', pending, passed
    finish(rid, m, 'DONE', now, keep)
    -- No holder, empty queue: the lcid is idle now.
    if not passed and pending == 0 then expire_idle(idle, now) end
    reply = { 'RELEASED', pending, passed }
  end
elseif m and m.s == 'DONE' and m.tok == token then
  -- A retry of a complete that already happened: answer as the first time, pop nothing.
  if m.nx == '' then
    reply = { 'RELEASED', m.pend or 0, m.pt or false }
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
