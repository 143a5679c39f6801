-- retry: queue a DEAD request again, with a fresh attempt budget, at the tail of its lcid's queue.
-- KEYS: the lcid's keys (includes/store.lua: state, queue, due).
-- ARGV[1] requestId
-- ARGV[2] queue bound
-- ARGV[3] idle-key retention ms
-- Returns QUEUED | QUEUE_FULL | NOT_DEAD | NOT_FOUND.
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/stats"
--- @include "includes/requests"
--- @include "includes/lock"
--- @include "includes/claim_index"
--- @include "includes/expiry"
--- @include "includes/busy_index"
local rid, qmax, idle = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local now, now_us = clock()
prefetch({ 'lock', 'm:' .. rid, 'seq', 'pd', 'xd' })
prune(now)

local reply
local m = get_meta(rid)
if not m then
  reply = { 'NOT_FOUND' }
elseif m.s ~= 'DEAD' then
  reply = { 'NOT_DEAD', m.s, m.a }
else
  local qlen = redis.call('LLEN', K_QUEUE)
  if qlen >= qmax then
    reply = { 'QUEUE_FULL', qlen }
  else
    m.s = 'QUEUED'
    m.a = '1'
    m.why = 'retried after: ' .. (m.why or 'unknown')
    m.qt = num(now)
    put_meta(rid, m)
    -- (The due times pd and xd stay: an earlier pd only costs prune a look, a later xd an idle
    -- lcid a longer TTL.)
    redis.call('ZREM', K_DUE, rid)
    qlen = redis.call('RPUSH', K_QUEUE, rid)
    local l = live_lock(now)
    -- No live holder to hand it to: make it claimable.
    index_hint(l and l.exp or now, now_us)
    if not l and qlen == 1 then busy_hint(now, now_us) end
    reply = { 'QUEUED', qlen, qlen }
  end
end

settle(idle, now, now_us)
return with_stats(reply)
