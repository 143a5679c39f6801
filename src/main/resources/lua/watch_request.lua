-- watch_request: view_request for a long-poll on the view (GET .../requests/{id}?waitMs=N). A
-- request that has not ended is marked watched (field w of its meta), so that the script that ends it wakes the
-- long-poll (includes/requests.lua finish); requests nobody watches end without a PUBLISH. The
-- mark is a hint, not state a client was told about: lost (failover), the re-check finds the end.
-- KEYS: the lcid's keys (includes/store.lua: state, queue, due).
-- ARGV[1] requestId
-- Returns what view_request.lua returns.
--- @include "includes/store"
--- @include "includes/requests"
--- @include "includes/request_view"
local rid = ARGV[1]
local m = get_meta(rid)
if not m then return { 'NOT_FOUND' } end
if (m.s == 'QUEUED' or m.s == 'ACTIVE') and not m.w then
  m.w = '1'
  put_meta(rid, m)
  flush()
end
return request_view(rid, m)
