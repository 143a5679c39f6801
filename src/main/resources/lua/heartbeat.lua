-- heartbeat: renew the live holder's lease.
-- KEYS: the lcid's keys (includes/keys.lua: lock, queue, requests, fence, purge).
-- ARGV[1] token
-- ARGV[2] leaseMs, '' to keep the lease the lock was granted with
-- Returns ACQUIRED | LOCK_LOST.
--- @include "includes/keys"
--- @include "includes/clock"
--- @include "includes/stats"
--- @include "includes/lock"
--- @include "includes/claim_index"
--- @include "includes/replies"
local token, lease_arg = ARGV[1], ARGV[2]
local now, now_us = clock()

local l = live_lock(now, HOLDER_FIELDS)
if not l or l.token ~= token then return with_stats({ 'LOCK_LOST' }) end
local lease = tonumber(l.lease)
if lease_arg ~= '' then lease = tonumber(lease_arg) end
local was_exp = tonumber(l.exp)
-- How far into its lease the holder renews it, so the service can tell holders that cut it fine.
stats.renewed_after, stats.renewed_lease = now - (was_exp - tonumber(l.lease)), tonumber(l.lease)
l.exp, l.lease = num(now + lease), tostring(lease)
redis.call('HSET', K_LOCK, 'exp', l.exp, 'lease', l.lease)
-- A longer lease leaves the claim index early, which is harmless; a shorter one must tell it, or
-- a holder that dies after cutting its lease would leave its queue unclaimed until the old end.
if now + lease < was_exp then index_hint(now + lease, now_us) end
return with_stats(acquired_reply(l))
