-- view_lock: what a caller may see of an lcid's lock; never the token. Changes nothing.
-- KEYS: the lcid's keys (includes/keys.lua: lock, queue, requests, fence, purge).
-- ARGV: none
-- Returns { held 0|1, fence or false, activeRequestId or false, leaseRemainingMs, queueLength,
-- activeRequestIds (when held: the whole batch, in order), held for ms (when held, and the lock
-- records when its holder got it: hs, written by grants since the busy index came) }.
--- @include "includes/keys"
--- @include "includes/clock"
--- @include "includes/lock"
local now = clock()
local l = live_lock(now)
local qlen = redis.call('LLEN', K_QUEUE)
local fence = redis.call('GET', K_FENCE) or false
if l then
  local held_for = l.hs and tostring(math.max(0, now - tonumber(l.hs))) or false
  return { 1, l.fence, l.rid, tostring(tonumber(l.exp) - now), qlen, active_rids(l), held_for }
end
return { 0, fence, false, '0', qlen }
