-- Request records in the state hash (meta, payload, result; includes/store.lua) and their retention.
--- @include "includes/store"
--- @include "includes/clock"
--- @include "includes/stats"
--- @include "includes/wake"

local function has_payload(m)
  return m.p == '1'
end

-- Terminal records stay for `keep` ms so retries and late readers still get their answer: due
-- then in the due set, whose earliest (field pd) and latest (field xd) due times the state hash
-- keeps, so that prune only looks when something is due and an idle lcid's TTL covers the last.
local function note_due(rid, due)
  local due_s = num(due)
  redis.call('ZADD', K_DUE, due_s, rid)
  local first = hget('pd')
  if not first or due < tonumber(first) then hset('pd', due_s) end
  local last = hget('xd')
  if not last or due > tonumber(last) then hset('xd', due_s) end
end

-- A request's end wakes whoever may wait for it: the submitter of a wait request (its acquire
-- long-poll), or a long-poll on its view, which marked it watched (meta field w, watch_request.lua).
-- Nobody else is told: most requests end unwatched, and a PUBLISH costs Redis and every replica.
local function finish(rid, m, state, now, keep, result)
  if state == 'DONE' and m.at then stats.held = now - m.at end
  if state == 'DEAD' then
    stats.dead = stats.dead + 1
    stats.dead_rid = stats.dead_rid and (stats.dead_rid .. ',' .. rid) or rid
  end
  m.s = state
  if state ~= 'DEAD' and has_payload(m) then
    hdel('p:' .. rid)
    m.p = '0'
  end
  put_meta(rid, m, result)
  note_due(rid, now + keep)
  if m.md == 'w' or m.w then wake(rid) end
end

-- Drops the records that are due (at most 64 per call, so no script runs long).
local function prune(now)
  local first = hget('pd')
  if not first or tonumber(first) > now then return end
  local old = redis.call('ZRANGEBYSCORE', K_DUE, '-inf', num(now), 'LIMIT', '0', '64')
  for _, rid in ipairs(old) do drop_request(rid) end
  if #old > 0 then redis.call('ZREM', K_DUE, unpack(old)) end
  local next_due = redis.call('ZRANGE', K_DUE, '0', '0', 'WITHSCORES')[2]
  if next_due then
    hset('pd', next_due)
  else
    hdel('pd')
    hdel('xd')
  end
end
