-- Replies that several scripts answer (redis/Reply.java, lock/ScriptReplies.java read them).
--- @include "includes/keys"
--- @include "includes/requests"

local function next_reply(l, m, rid)
  local payload = false
  if m.p ~= 0 then payload = get_payload(rid) or false end
  return { 'NEXT', l.token, l.fence, l.exp, tostring(l.lease), rid, tostring(m.a), payload }
end

local function acquired_reply(l)
  return { 'ACQUIRED', l.token, l.fence, l.exp, tostring(l.lease), l.rid }
end

local function duplicate_reply(rid, m)
  return { 'DUPLICATE_REQUEST', m.s, tostring(m.a), redis.call('HGET', K_REQS, 'r:' .. rid) or false, m.why or false }
end

local function position(rid)
  local idx = redis.call('LPOS', K_QUEUE, rid)
  if not idx then return nil end
  return idx + 1
end
