-- claim: hand orphaned work of one lcid to a worker that asks for any (POST /v1/claims).
-- The claim index that pointed here is only a hint; this script checks the lcid's own keys.
-- KEYS: the lcid's keys (includes/store.lua: state, queue, due).
-- ARGV[1] token to hand out (or to give a wait request at the head for its turn)
-- ARGV[2] leaseMs
-- ARGV[3] max attempts
-- ARGV[4] idle-key retention ms
-- ARGV[5] DEAD retention ms
-- ARGV[6] result retention ms
-- ARGV[7] pick-up window ms of a wait request's turn
-- ARGV[8] take: how many queued handoff requests the claimer is handed at most (1 to 100)
-- Returns NEXT | { 'BUSY', lease end ms, index version } | { 'IDLE', index version }. A wait
-- request at the head is never handed out: it is granted its turn, and the claim answers BUSY.
-- The index version is that of what this call saw (includes/claim_index.lua index_version):
-- the service re-scores or drops the lcid's index entry with it, so a newer hint always wins.
--- @include "includes/store"
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
--- @include "includes/batch"
local token, lease = ARGV[1], ARGV[2]
local max_attempts, idle, dead_keep = tonumber(ARGV[3]), ARGV[4], ARGV[5]
local keep, pickup, take = ARGV[6], ARGV[7], tonumber(ARGV[8])
local now, now_us = clock()
prefetch({ 'lock', 'fence', 'seq', 'pd', 'xd' })
prune(now)
local reply
local l = recover_orphan(now, max_attempts, dead_keep, keep)
if l then
  reply = { 'BUSY', l.exp, index_version(now_us) }
else
  local rids, metas, fence = take_batch(take, now, now_us)
  local head = not rids and redis.call('LPOP', K_QUEUE)
  if rids then
    reply = next_reply(grant(token, rids[1], fence, now, now_us, lease, '', 'claim', '1', batch_field(rids)), metas)
  elseif not head then
    reply = { 'IDLE', index_version(now_us) }
  else
    -- A wait request at the head (take_batch stops before it): its turn, never handed out.
    local turn = grant_turn(head, get_meta(head), token, now, now_us, pickup)
    reply = { 'BUSY', turn.exp, index_version(now_us) }
  end
end

settle(idle, now, now_us)
return with_stats(reply)
