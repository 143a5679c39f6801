-- The keys of one lcid, KEYS[1..3] of every lcid script, in the order redis/LockKeys.java sends
-- them, and the script's view of the lcid's state hash. What each key and field holds:
-- docs/internals/redis-layout.md, the one place it is written.
--
-- Scripts read hash fields through hget (fetched together by prefetch, then remembered) and write
-- them through hset and hdel, buffered until flush writes them all with one HSET and one HDEL:
-- each Redis call costs a script as much as many lines of Lua, and a cycle used to make a dozen.

local K_STATE, K_QUEUE, K_DUE = KEYS[1], KEYS[2], KEYS[3]

local read_fields = {}   -- field -> value read from Redis, false when absent
local written = {}       -- field -> value to write, false to delete
local metas = {}         -- requestId -> its meta table, false when it has none
local metas_written = {} -- requestId -> true when its meta is to be written

-- Reads these fields with one HMGET, for the hget calls that follow.
local function prefetch(fields)
  local values = redis.call('HMGET', K_STATE, unpack(fields))
  for i, f in ipairs(fields) do
    if read_fields[f] == nil then read_fields[f] = values[i] or false end
  end
end

local function hget(f)
  local v = written[f]
  if v == nil then
    v = read_fields[f]
    if v == nil then
      v = redis.call('HGET', K_STATE, f) or false
      read_fields[f] = v
    end
  end
  return v or nil
end

local function hset(f, v)
  written[f] = v
end

local function hdel(f)
  written[f] = false
end

-- A request's meta (cjson): state s, attempt a, ... (docs/internals/redis-layout.md). Every value
-- is a string, so that encoding it formats no numbers. The same table for every call in a script:
-- change it, then put_meta it.
local function get_meta(rid)
  local m = metas[rid]
  if m == nil then
    local raw = hget('m:' .. rid)
    m = raw and cjson.decode(raw) or false
    metas[rid] = m
  end
  return m or nil
end

-- result: a result JSON to store with it (r:<id>), or nil.
local function put_meta(rid, m, result)
  metas[rid] = m
  metas_written[rid] = true
  if result then hset('r:' .. rid, result) end
end

-- Forgets every record of the request (meta, payload, result).
local function drop_request(rid)
  metas[rid] = false
  metas_written[rid] = nil
  hdel('m:' .. rid)
  hdel('p:' .. rid)
  hdel('r:' .. rid)
end

local function get_payload(rid)
  return hget('p:' .. rid)
end

-- Writes what the script changed in the state hash. Every script that changes it ends with this.
local function flush()
  for rid in pairs(metas_written) do written['m:' .. rid] = cjson.encode(metas[rid]) end
  metas_written = {}
  local sets, dels = {}, {}
  for f, v in pairs(written) do
    if v then
      sets[#sets + 1] = f
      sets[#sets + 1] = v
    else
      dels[#dels + 1] = f
    end
    read_fields[f] = v
  end
  written = {}
  if #sets > 0 then redis.call('HSET', K_STATE, unpack(sets)) end
  if #dels > 0 then redis.call('HDEL', K_STATE, unpack(dels)) end
end
