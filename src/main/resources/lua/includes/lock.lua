-- The lock hash of one lcid.
--- @include "includes/keys"

local function read_lock()
  local flat = redis.call('HGETALL', K_LOCK)
  if #flat == 0 then return nil end
  local l = {}
  for i = 1, #flat, 2 do l[flat[i]] = flat[i + 1] end
  return l
end

-- The lock as the live holder has it, or nil when absent or its lease ran out.
local function live_lock(now)
  local l = read_lock()
  if l and tonumber(l.exp) > now then return l end
  return nil
end

-- The requests active under the lock, in queue order: a batch (protocol v1.1 batch handoff) keeps
-- them in field b, comma-separated (requestIds never contain a comma); one request only in rid.
local function active_rids(l)
  if not l.b or l.b == '' then return { l.rid } end
  local rids = {}
  for r in string.gmatch(l.b, '[^,]+') do rids[#rids + 1] = r end
  return rids
end
