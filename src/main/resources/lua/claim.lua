-- claim: hand orphaned work of one lcid to a worker that asks for any (POST /v1/claims).
-- The claim index that pointed here is only a hint; this script checks the lcid's own keys.
-- KEYS: see lib.lua (lock, queue, requests, fence, purge).
-- ARGV[1] mode: 'grant' to take the work, 'inspect' to only report (changes nothing)
-- ARGV[2] token to hand out
-- ARGV[3] leaseMs
-- ARGV[4] max attempts
-- ARGV[5] idle-key retention ms
-- ARGV[6] DEAD retention ms
-- Returns NEXT | { 'BUSY', lease end ms, index version } | { 'IDLE', index version } | { 'CLAIMABLE' }
-- (inspect). The index version is that of what this call saw (lib.lua index_version): the
-- service re-scores or drops the lcid's index entry with it, so a newer hint always wins.
local mode, token, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])
local max_attempts, idle, dead_keep = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local now, now_us = clock()

if mode == 'inspect' then
  local l = read_lock()
  if l and tonumber(l.exp) > now then return { 'BUSY', l.exp, index_version(now_us) } end
  if l or redis.call('LLEN', K_QUEUE) > 0 then return { 'CLAIMABLE' } end
  return { 'IDLE', index_version(now_us) }
end

prune(now)
local reply
local l = recover_orphan(now, max_attempts, dead_keep)
if l then
  reply = { 'BUSY', l.exp, index_version(now_us) }
else
  local head = redis.call('LPOP', K_QUEUE)
  if not head then
    reply = { 'IDLE', index_version(now_us) }
  else
    local m = get_meta(head)
    local fence = next_fence(now_us)
    activate(head, m, fence, now)
    reply = next_reply(grant(token, head, fence, now, now_us, lease, '', 'claim'), m, head)
  end
end

touch(idle, now)
return with_stats(reply)
