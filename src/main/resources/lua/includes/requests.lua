-- Request records in the requests hash (meta, payload, result) and their retention.
--- @include "includes/keys"
--- @include "includes/clock"
--- @include "includes/stats"
--- @include "includes/wake"

local function get_meta(rid)
  local raw = redis.call('HGET', K_REQS, 'm:' .. rid)
  if not raw then return nil end
  return cjson.decode(raw)
end

-- result: a result JSON to store with it (r:<id>), or nil.
local function put_meta(rid, m, result)
  if result then
    redis.call('HSET', K_REQS, 'm:' .. rid, cjson.encode(m), 'r:' .. rid, result)
  else
    redis.call('HSET', K_REQS, 'm:' .. rid, cjson.encode(m))
  end
end

local function get_payload(rid)
  return redis.call('HGET', K_REQS, 'p:' .. rid)
end

-- Terminal records stay for `keep` ms so retries and late readers still get their answer. A
-- request's end wakes whoever may wait for it: the submitter of a wait request (its acquire
-- long-poll), or a long-poll on its view, which marked it watched (meta field w, watch_request.lua).
-- Nobody else is told: most requests end unwatched, and a PUBLISH costs Redis and every replica.
local function finish(rid, m, state, now, keep, result)
  if state == 'DONE' and m.at then stats.held = now - tonumber(m.at) end
  if state == 'DEAD' then
    stats.dead = stats.dead + 1
    stats.dead_rid = stats.dead_rid and (stats.dead_rid .. ',' .. rid) or rid
  end
  m.s = state
  if state ~= 'DEAD' and m.p ~= 0 then
    redis.call('HDEL', K_REQS, 'p:' .. rid)
    m.p = 0
  end
  put_meta(rid, m, result)
  redis.call('ZADD', K_PURGE, num(now + keep), rid)
  if m.md == 'w' or m.w then wake(rid) end
end

local function prune(now)
  local old = redis.call('ZRANGEBYSCORE', K_PURGE, '-inf', num(now), 'LIMIT', '0', '64')
  for _, rid in ipairs(old) do
    -- (w:<id>: where watch marks were kept before they moved into the meta.)
    redis.call('HDEL', K_REQS, 'm:' .. rid, 'p:' .. rid, 'r:' .. rid, 'w:' .. rid)
    redis.call('ZREM', K_PURGE, rid)
  end
end
