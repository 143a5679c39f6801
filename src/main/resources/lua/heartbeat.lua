-- heartbeat: renew the live holder's lease.
-- KEYS: see lib.lua (lock, queue, requests, fence, purge).
-- ARGV[1] token
-- ARGV[2] leaseMs, '' to keep the lease the lock was granted with
-- Returns ACQUIRED | LOCK_LOST (see LuaReplies.java).
local token, lease_arg = ARGV[1], ARGV[2]
local now = clock()

local l = live_lock(now)
if not l or l.token ~= token then return with_stats({ 'LOCK_LOST' }) end
local lease = tonumber(l.lease)
if lease_arg ~= '' then lease = tonumber(lease_arg) end
l.exp, l.lease = num(now + lease), tostring(lease)
redis.call('HSET', K_LOCK, 'exp', l.exp, 'lease', l.lease)
return with_stats(acquired_reply(l))
