-- heartbeat: renew the live holder's lease.
-- KEYS: the lcid's keys (includes/store.lua: state, queue, due).
-- ARGV[1] token
-- ARGV[2] leaseMs, '' to keep the lease the lock was granted with
-- Returns ACQUIRED | LOCK_LOST.
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/stats"
--- @include "includes/lock"
--- @include "includes/claim_index"
--- @include "includes/replies"
local token, lease_arg = ARGV[1], ARGV[2]
local now, now_us = clock()
prefetch({ 'lock', 'seq' })

local l = live_lock(now)
if not l or l.token ~= token then return with_stats({ 'LOCK_LOST' }) end
local lease = l.lease
if lease_arg ~= '' then lease = lease_arg end
local was_exp = l.exp
-- How far into its lease the holder renews it, so the service can tell holders that cut it fine.
stats.renewed_after, stats.renewed_lease = now - l.t, tonumber(l.lease)
l.t, l.lease, l.exp = num(now), lease, now + lease
write_lock(l)
-- A longer lease leaves the claim index early, which is harmless; a shorter one must tell it, or
-- a holder that dies after cutting its lease would leave its queue unclaimed until the old end.
if l.exp < was_exp then index_hint(l.exp, now_us) end
flush()
return with_stats(acquired_reply(l))
