-- claim: hand orphaned work of one lcid to a worker that asks for any (POST /v1/claims).
-- The claim index that pointed here is only a hint; this script checks the lcid's own keys.
-- KEYS: the lcid's keys (includes/keys.lua: lock, queue, requests, fence, purge).
-- ARGV[1] token to hand out (or to give a wait request at the head for its turn)
-- ARGV[2] leaseMs
-- ARGV[3] max attempts
-- ARGV[4] idle-key retention ms
-- ARGV[5] DEAD retention ms
-- ARGV[6] result retention ms
-- ARGV[7] pick-up window ms of a wait request's turn
-- Returns NEXT | { 'BUSY', lease end ms, index version } | { 'IDLE', index version }. A wait
-- request at the head is never handed out: it is granted its turn, and the claim answers BUSY.
-- The index version is that of what this call saw (includes/claim_index.lua index_version):
-- the service re-scores or drops the lcid's index entry with it, so a newer hint always wins.
--- @include "includes/keys"
--- @include "includes/clock"
--- @include "includes/stats"
--- @include "includes/requests"
--- @include "includes/recovery"
--- @include "includes/fence"
--- @include "includes/grant"
--- @include "includes/replies"
--- @include "includes/claim_index"
--- @include "includes/expiry"
--- @include "includes/turns"
local token, lease = ARGV[1], tonumber(ARGV[2])
local max_attempts, idle, dead_keep = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local keep, pickup = tonumber(ARGV[6]), tonumber(ARGV[7])
local now, now_us = clock()

prune(now)
local reply
local l = recover_orphan(now, max_attempts, dead_keep, keep)
if l then
  reply = { 'BUSY', l.exp, index_version(now_us) }
else
  local head = redis.call('LPOP', K_QUEUE)
  if not head then
    reply = { 'IDLE', index_version(now_us) }
  else
    local m = get_meta(head)
    if is_wait(m) then
      local turn = grant_turn(head, m, token, now, now_us, pickup)
      reply = { 'BUSY', turn.exp, index_version(now_us) }
    else
      local fence = next_fence(now_us)
      activate(head, m, fence, now)
      reply = next_reply(grant(token, head, fence, now, now_us, lease, '', 'claim'), m, head)
    end
  end
end

touch(idle, now)
return with_stats(reply)
