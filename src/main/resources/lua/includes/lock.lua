-- The lock of one lcid: field lock of the state hash, one string of space-separated parts (no
-- part's alphabet has a space; acq and b may be empty), '' or absent when nobody holds it:
--   token rid fence t lease acq via pk hs b
-- fence: the grant's; t: when the lease was last started (ms), lease: its length (ms), so it ends
-- at t + lease; acq: the requestId whose acquire was granted it ('' for handoffs and claims); via:
-- acquire | complete | claim | turn; pk: '0' for a wait request's turn not picked up yet, else
-- '1'; hs: when its holder got it (ms); b: a batch's requestIds, comma-separated, rid first, or ''.
-- One field instead of one hash per lock: one string for Redis to store and Lua to read.
--- @include "includes/store"

local LOCK_PARTS = '^(%S+) (%S+) (%S+) (%S+) (%S+) (%S*) (%S+) (%S+) (%S+) (%S*)$'

local parsed_raw, parsed_lock

-- The lock as a table of its parts (all strings but exp, its end in ms), or nil when nobody holds it.
local function read_lock()
  local raw = hget('lock')
  if not raw or raw == '' then return nil end
  if raw ~= parsed_raw then
    local token, rid, fence, t, lease, acq, via, pk, hs, b = string.match(raw, LOCK_PARTS)
    parsed_raw = raw
    parsed_lock = { token = token, rid = rid, fence = fence, t = t, lease = lease, exp = t + lease,
      acq_rid = acq, via = via, pk = pk, hs = hs, b = b }
  end
  return parsed_lock
end

local function write_lock(l)
  local raw = table.concat({ l.token, l.rid, l.fence, l.t, l.lease, l.acq_rid, l.via, l.pk, l.hs, l.b }, ' ')
  parsed_raw, parsed_lock = raw, l
  hset('lock', raw)
end

local function clear_lock()
  hset('lock', '')
end

local function has_lock()
  local raw = hget('lock')
  return raw ~= nil and raw ~= ''
end

-- The lock as the live holder has it, or nil when absent or its lease ran out.
local function live_lock(now)
  local l = read_lock()
  if l and l.exp > now then return l end
  return nil
end

-- The requests active under the lock, in queue order: a batch (protocol v1.1 batch handoff) keeps
-- them in part b, comma-separated (requestIds never contain a comma); one request only in rid.
local function active_rids(l)
  if l.b == '' then return { l.rid } end
  local rids = {}
  for r in string.gmatch(l.b, '[^,]+') do rids[#rids + 1] = r end
  return rids
end
