-- view_lock: what a caller may see of an lcid's lock; never the token. Changes nothing.
-- KEYS: the lcid's keys (includes/store.lua: state, queue, due).
-- ARGV: none
-- Returns { held 0|1, fence or false, activeRequestId or false, leaseRemainingMs, queueLength,
-- activeRequestIds (when held: the whole batch, in order), held for ms (when held) }.
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/lock"
local now = clock()
prefetch({ 'lock', 'fence' })
local l = live_lock(now)
local qlen = redis.call('LLEN', K_QUEUE)
if l then
  return { 1, l.fence, l.rid, l.exp - now, qlen, active_rids(l), math.max(0, now - l.hs) }
end
return { 0, hget('fence') or false, false, 0, qlen }
