-- view_dead: one DEAD request with its payload, for the dead-letter listing. Changes nothing.
-- KEYS: the lcid's keys (includes/store.lua: state, queue, due).
-- ARGV[1] requestId
-- Returns { 'DEAD', attempts, reason or false, payload or false } | { 'GONE' } (retried, or dropped).
--- @include "includes/store"
--- @include "includes/requests"
local rid = ARGV[1]
local m = get_meta(rid)
if not m or m.s ~= 'DEAD' then return { 'GONE' } end
return { 'DEAD', m.a, m.why or false, get_payload(rid) or false }
