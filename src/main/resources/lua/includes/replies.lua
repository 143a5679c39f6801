-- Replies that several scripts answer (redis/Reply.java, lock/ScriptReplies.java read them).
--- @include "includes/store"
--- @include "includes/requests"
--- @include "includes/lock"

-- NEXT for the lock l: its first request as v1 answers it, then every request of its batch as
-- { requestId, attempt, payload, traceparent, tracestate } (one for a single request). metas:
-- the requests' metas by requestId when the caller has them, else they are read.
local function next_reply(l, metas)
  local items = {}
  for i, rid in ipairs(active_rids(l)) do
    local m = metas and metas[rid] or get_meta(rid)
    local payload = false
    if has_payload(m) then payload = get_payload(rid) or false end
    items[i] = { rid, m.a, payload, m.tp or false, m.ts or false }
  end
  local first = items[1]
  return { 'NEXT', l.token, l.fence, l.exp, l.lease, first[1], first[2], first[3], items }
end

-- m: the active request's meta, for its trace context and attempt; nil where the answer is about
-- the lease only (a heartbeat).
local function acquired_reply(l, m)
  return { 'ACQUIRED', l.token, l.fence, l.exp, l.lease, l.rid, m and m.tp or false, m and m.ts or false,
           m and m.a or false }
end

local function duplicate_reply(rid, m)
  return { 'DUPLICATE_REQUEST', m.s, m.a, hget('r:' .. rid) or false, m.why or false }
end

local function position(rid)
  local idx = redis.call('LPOS', K_QUEUE, rid)
  if not idx then return nil end
  return idx + 1
end
