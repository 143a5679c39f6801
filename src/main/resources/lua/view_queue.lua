-- view_queue: a page of an lcid's queue, head first, for operators (GET .../queue). Changes nothing.
-- KEYS: the lcid's keys (includes/store.lua: state, queue, due).
-- ARGV[1] offset: the first position to list, from 0
-- ARGV[2] limit: how many at most (the service bounds it, 1 to 100)
-- ARGV[3] '1' to list each request's payload, '0' not to read them
-- Returns { queue length, now (ms, Redis clock), { { requestId, state, attempt, mode ('w' or
-- false), queued at (ms) or false, reason or false, payload or false }, ... } }.
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/requests"
local offset, limit, with_payload = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == '1'
local now = clock()
local qlen = redis.call('LLEN', K_QUEUE)
local rids = redis.call('LRANGE', K_QUEUE, num(offset), num(offset + limit - 1))
local items = {}
if #rids > 0 then
  -- One read for the whole page: the metas, and the payloads when asked for.
  local fields = {}
  for i, rid in ipairs(rids) do
    fields[i] = 'm:' .. rid
    if with_payload then fields[#rids + i] = 'p:' .. rid end
  end
  local values = redis.call('HMGET', K_STATE, unpack(fields))
  for i, rid in ipairs(rids) do
    local m = values[i] and cjson.decode(values[i]) or { s = 'QUEUED', a = '1' }
    local payload = false
    if with_payload then payload = values[#rids + i] or false end
    items[i] = { rid, m.s, m.a, m.md or false, m.qt or false, m.why or false, payload }
  end
end
return { qlen, num(now), items }
