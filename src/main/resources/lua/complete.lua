-- complete: the active request (or the whole active batch) is DONE; hand the next queued requests
-- to the holder (NEXT), pass the lock to a wait request at the head (its turn), or release it.
-- The holder is handed handoff requests only when it can do any request: it held handoff
-- requests, or sent take.
-- KEYS: the lcid's keys (includes/store.lua: state, queue, due).
-- ARGV[1] token
-- ARGV[2] result retention ms
-- ARGV[3] idle-key retention ms
-- ARGV[4] take: how many queued handoff requests the holder takes at most (1 to 100); 0 when it
--         did not say, which means 1 for a holder of handoff requests and none for a wait holder
-- ARGV[5] token for a wait request whose turn this complete grants (fresh, >= 128 random bits)
-- ARGV[6] pick-up window ms of that turn
-- ARGV[7] '1' when the caller named a batch (completed), '0' for one requestId (v1)
-- ARGV[8], ARGV[9], ...: requestId, result JSON ('' for none), for each request completed
-- Returns NEXT | { 'RELEASED', pending, passedTo or false } | LOCK_LOST | { 'BATCH_MISMATCH', active requestIds }.
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/stats"
--- @include "includes/requests"
--- @include "includes/lock"
--- @include "includes/fence"
--- @include "includes/grant"
--- @include "includes/replies"
--- @include "includes/expiry"
--- @include "includes/turns"
--- @include "includes/batch"
local token, keep, idle, take = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local turn_token, pickup, named_batch = ARGV[5], ARGV[6], ARGV[7] == '1'
-- Everything a complete reads of the state hash, in one read: the lock, the fence and due times
-- it may change, and the named requests' metas.
local names, results, fields = {}, {}, { 'lock', 'fence', 'pd', 'xd' }
for i = 8, #ARGV, 2 do
  names[#names + 1] = ARGV[i]
  results[ARGV[i]] = ARGV[i + 1]
  fields[#fields + 1] = 'm:' .. ARGV[i]
end
local now, now_us = clock()
prefetch(fields)
prune(now)

local l = live_lock(now)
local active = l and l.token == token and active_rids(l)

-- The metas of the named requests when they are exactly the active ones (the service refuses a
-- name given twice), else nil.
local function active_metas()
  if not active or #names ~= #active then return nil end
  local metas = {}
  for _, r in ipairs(names) do
    if not contains(active, r) then return nil end
    metas[r] = get_meta(r)
    if not metas[r] then return nil end
  end
  return metas
end

-- A retry of a complete that already happened: every name DONE by this token, in one complete
-- of as many requests. Answers the first one's meta, which says what that complete answered.
local function replayed()
  local first
  for _, r in ipairs(names) do
    local m = get_meta(r)
    if not m or m.s ~= 'DONE' or m.tok ~= token or tonumber(m.bn or 1) ~= #names then return nil end
    if first and m.nx ~= first.nx then return nil end
    first = first or m
  end
  return first
end

local reply
local metas = active_metas()
if metas then
  local n = take
  if n == 0 and not is_wait(metas[active[1]]) then n = 1 end
  local rids, next_metas, fence, empty
  if n > 0 then rids, next_metas, fence, empty = take_batch(n, now, now_us) end
  local pending, passed = 0, false
  -- No handoff: a wait request at the head gets its turn, else the lock is released.
  if not rids then pending, passed = pass_on(turn_token, now, now_us, pickup, empty) end
  for _, r in ipairs(names) do
    local m = metas[r]
    m.tok, m.nx = token, rids and rids[1] or ''
    if #names > 1 then m.bn = tostring(#names) end
    if not rids then m.pend, m.pt = pending == 0 and '0' or tostring(pending), passed end
    finish(r, m, 'DONE', now, keep, results[r] ~= '' and results[r] or nil)
  end
  if rids then
    -- Handoff: same token, new fence, fresh lease; the lock is never free in between.
    reply = next_reply(grant(token, rids[1], fence, now, now_us, l.lease, '', 'complete', '1',
      batch_field(rids)), next_metas)
  else
    reply = { 'RELEASED', pending, passed }
  end
  -- The holder's lcid was busy; released with nothing queued it is idle now.
  settle(idle, now, now_us, true, rids and 1 or pending)
else
  local done = replayed()
  if done then
    -- Answer as the first time, pop nothing.
    if done.nx == '' then
      reply = { 'RELEASED', tonumber(done.pend or 0), done.pt or false }
    elseif l and l.token == token and l.rid == done.nx then
      reply = next_reply(l)
    else
      reply = { 'LOCK_LOST' }
    end
  elseif active and (named_batch or (#active > 1 and contains(active, names[1]))) then
    -- The live holder named other requests than its batch: nothing changes, it still holds it.
    reply = { 'BATCH_MISMATCH', active }
  else
    reply = { 'LOCK_LOST' }
  end
end

-- Every other path leaves the lcid busy as it was, or changes nothing but what prune dropped.
if not metas then flush() end
return with_stats(reply)
