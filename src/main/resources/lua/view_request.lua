-- view_request: one request's state as a caller may see it. Changes nothing.
-- KEYS: the lcid's keys (includes/keys.lua: lock, queue, requests, fence, purge).
-- ARGV[1] requestId
-- Returns NOT_FOUND | { 'REQUEST', state, attempt, position or false, fence or false, result or false, reason or false }.
--- @include "includes/keys"
--- @include "includes/requests"
--- @include "includes/replies"
local rid = ARGV[1]
local m = get_meta(rid)
if not m then return { 'NOT_FOUND' } end
local pos = false
if m.s == 'QUEUED' then pos = position(rid) or false end
return { 'REQUEST', m.s, tostring(m.a), pos, m.f or false, redis.call('HGET', K_REQS, 'r:' .. rid) or false, m.why or false }
