-- What a caller may see of one request (GET .../requests/{id}).
--- @include "includes/store"
--- @include "includes/requests"
--- @include "includes/replies"

-- { 'REQUEST', state, attempt, position or false, fence or false, result or false, reason or false,
--   traceparent or false, tracestate or false }
local function request_view(rid, m)
  local pos = false
  if m.s == 'QUEUED' then pos = position(rid) or false end
  return { 'REQUEST', m.s, m.a, pos, m.f or false, hget('r:' .. rid) or false,
    m.why or false, m.tp or false, m.ts or false }
end
