-- claim_inspect: what a claim would find on one lcid, without taking anything (index sweeps).
-- Changes nothing.
-- KEYS: the lcid's keys (includes/store.lua: state, queue, due).
-- ARGV: none
-- Returns { 'BUSY', lease end ms, index version } | { 'CLAIMABLE' } | { 'IDLE', index version },
-- with the index version as in claim.lua.
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/lock"
--- @include "includes/claim_index"
local now, now_us = clock()
prefetch({ 'lock', 'seq' })
local l = read_lock()
if l and l.exp > now then return { 'BUSY', l.exp, index_version(now_us) } end
if l or redis.call('LLEN', K_QUEUE) > 0 then return { 'CLAIMABLE' } end
return { 'IDLE', index_version(now_us) }
