-- view_request: one request's state as a caller may see it. Changes nothing.
-- KEYS: the lcid's keys (includes/store.lua: state, queue, due).
-- ARGV[1] requestId
-- Returns NOT_FOUND | { 'REQUEST', state, attempt, position or false, fence or false, result or false, reason or false,
--   traceparent or false, tracestate or false }.
--- @include "includes/store"
--- @include "includes/requests"
--- @include "includes/request_view"
local rid = ARGV[1]
local m = get_meta(rid)
if not m then return { 'NOT_FOUND' } end
return request_view(rid, m)
