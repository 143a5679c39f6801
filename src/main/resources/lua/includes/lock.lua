-- The lock hash of one lcid.
--- @include "includes/keys"

local function read_lock()
  local flat = redis.call('HGETALL', K_LOCK)
  if #flat == 0 then return nil end
  local l = {}
  for i = 1, #flat, 2 do l[flat[i]] = flat[i + 1] end
  return l
end

-- The lock as the live holder has it, or nil when absent or its lease ran out. fields: the fields
-- the caller needs, token first (every lock has one), or nil for all of them. Each field a script
-- reads costs Redis a reply string and Lua a string of its own: a complete needs 6 of the 9.
local function live_lock(now, fields)
  local l
  if fields then
    local v = redis.call('HMGET', K_LOCK, unpack(fields))
    if v[1] then
      l = {}
      for i, f in ipairs(fields) do l[f] = v[i] or nil end
    end
  else
    l = read_lock()
  end
  if l and tonumber(l.exp) > now then return l end
  return nil
end

-- What a holder's call reads of its lock: enough to check the token and the lease, to know its
-- requests, and to answer the lock (replies.lua).
local HOLDER_FIELDS = { 'token', 'exp', 'rid', 'b', 'lease', 'fence' }

-- The requests active under the lock, in queue order: a batch (protocol v1.1 batch handoff) keeps
-- them in field b, comma-separated (requestIds never contain a comma); one request only in rid.
local function active_rids(l)
  if not l.b or l.b == '' then return { l.rid } end
  local rids = {}
  for r in string.gmatch(l.b, '[^,]+') do rids[#rids + 1] = r end
  return rids
end
