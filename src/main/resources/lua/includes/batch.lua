-- Batch handoff (protocol v1.1): a holder that sent take = n is handed up to n queued requests at
-- once, under one fence, and finishes them with one complete.
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/requests"
--- @include "includes/fence"
--- @include "includes/grant"
--- @include "includes/turns"

-- Takes up to n consecutive handoff requests off the head of the queue and makes them active
-- under one new fence. A batch stops before a wait request: only its submitter may do it.
-- Answers their requestIds in queue order, their metas by requestId, and the fence; nil when
-- the head is a wait request or the queue is empty, and then whether it is empty.
local function take_batch(n, now, now_us)
  local heads = redis.call('LRANGE', K_QUEUE, '0', num(n - 1))
  if #heads > 1 then
    local fields = {}
    for i, rid in ipairs(heads) do fields[i] = 'm:' .. rid end
    prefetch(fields)
  end
  local rids, metas = {}, {}
  for _, rid in ipairs(heads) do
    local m = get_meta(rid)
    if is_wait(m) then break end
    rids[#rids + 1] = rid
    metas[rid] = m
  end
  if #rids == 0 then return nil, nil, nil, #heads == 0 end
  if #rids == 1 then redis.call('LPOP', K_QUEUE) else redis.call('LTRIM', K_QUEUE, #rids, -1) end
  local fence = next_fence(now_us)
  for _, rid in ipairs(rids) do activate(rid, metas[rid], fence, now) end
  return rids, metas, fence
end

-- The batch part of the lock (includes/lock.lua): '' for one request.
local function batch_field(rids)
  if #rids > 1 then return table.concat(rids, ',') end
  return ''
end

local function contains(list, value)
  for _, v in ipairs(list) do
    if v == value then return true end
  end
  return false
end
