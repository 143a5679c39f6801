-- Baton shared Lua prelude. Not a script of its own: ScriptRegistry prepends it to every
-- script in this folder before loading, so all scripts agree on one key layout and one
-- set of state transitions.
--
-- KEYS (identical for every script; all carry the hash tag {lcid}, so one slot holds the lcid):
--   KEYS[1] lock     hash   token, rid, fence, exp (ms, Redis clock), lease (ms), caller, via
--   KEYS[2] queue    list   requestIds waiting, head = next to run
--   KEYS[3] requests hash   "m:<rid>" -> cjson meta, "p:<rid>" -> payload JSON, "r:<rid>" -> result JSON,
--                           "seq" -> the lcid's claim-index version (see index_hint)
--   KEYS[4] fence    string the last fence handed out for this lcid
--   KEYS[5] purge    zset   terminal requestIds, scored by when their record may be dropped
--
-- A request's meta: s = state (QUEUED, ACTIVE, DONE, ABORTED, DEAD), a = attempt, f = fence of
-- its last grant, why = last reason, by = who aborted it, tok = token that finished it,
-- nx = the request handed off by its complete ('' when the lock was released), pend = queue
-- length answered by its abort, qt = when it last joined the queue, at = when it last became
-- ACTIVE (ms, Redis clock), p = 1 when it has a payload field, 0 when not (absent in records
-- older than the field: then the payload field is looked up).
--
-- Expiry: while an lcid is busy (a lock hash or a non-empty queue) none of its keys has a TTL;
-- when it becomes idle, requests, fence and purge get one (the lock and an empty queue do not
-- exist then). TTLs change only on those transitions, so the hot paths (queue, handoff) touch
-- no TTL at all.
--
-- State-changing scripts end their reply with with_stats(reply): a last element
-- { requeued, dead, queue wait ms or -1, hold ms or -1, claim index score or -1, dead rid or false,
--   claim index version or false }
-- that feeds the service's metrics and its best-effort cross-lcid indexes (claims, dead letters),
-- which live in other slots and so cannot be written here. Numbers that can exceed 14 digits are kept as strings because
-- cjson would round them.

local K_LOCK, K_QUEUE, K_REQS, K_FENCE, K_PURGE = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]

local stats = { requeued = 0, dead = 0, waited = -1, held = -1, index_at = -1, dead_rid = false, index_seq = false }

local function with_stats(reply)
  reply[#reply + 1] = { stats.requeued, stats.dead, stats.waited, stats.held, stats.index_at, stats.dead_rid,
    stats.index_seq }
  return reply
end

-- Redis TIME is the only clock: leases are judged by the server every caller shares.
local function clock()
  local t = redis.call('TIME')
  local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  return math.floor(us / 1000), us
end

local function num(s) return string.format('%.0f', s) end

local function get_meta(rid)
  local raw = redis.call('HGET', K_REQS, 'm:' .. rid)
  if not raw then return nil end
  return cjson.decode(raw)
end

local function put_meta(rid, m)
  redis.call('HSET', K_REQS, 'm:' .. rid, cjson.encode(m))
end

local function get_payload(rid)
  return redis.call('HGET', K_REQS, 'p:' .. rid)
end

-- Terminal records stay for `keep` ms so retries and late readers still get their answer.
local function finish(rid, m, state, now, keep)
  if state == 'DONE' and m.at then stats.held = now - tonumber(m.at) end
  if state == 'DEAD' then
    stats.dead = stats.dead + 1
    stats.dead_rid = rid
  end
  m.s = state
  if state ~= 'DEAD' and m.p ~= 0 then
    redis.call('HDEL', K_REQS, 'p:' .. rid)
    m.p = 0
  end
  put_meta(rid, m)
  redis.call('ZADD', K_PURGE, now + keep, rid)
end

local function prune(now)
  local old = redis.call('ZRANGEBYSCORE', K_PURGE, '-inf', now, 'LIMIT', 0, 64)
  for _, rid in ipairs(old) do
    redis.call('HDEL', K_REQS, 'm:' .. rid, 'p:' .. rid, 'r:' .. rid)
    redis.call('ZREM', K_PURGE, rid)
  end
end

-- Fences must never go backwards, even after every key of the lcid expired: falling back to
-- the clock in microseconds keeps them rising without a cross-slot global counter.
local function next_fence(now_us)
  local stored = tonumber(redis.call('GET', K_FENCE) or '0')
  local f = math.max(stored + 1, now_us)
  redis.call('SET', K_FENCE, num(f))
  return f
end

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

-- Back to the head of the queue for another attempt, or DEAD once attempts are used up.
-- DEAD records are kept for dead_keep ms (with their payload) so they can be listed and retried.
local function requeue_or_dead(rid, m, reason, now, max_attempts, dead_keep)
  m.why = reason
  if tonumber(m.a) >= max_attempts then
    finish(rid, m, 'DEAD', now, dead_keep)
    return 'DEAD'
  end
  m.a = tonumber(m.a) + 1
  m.s = 'QUEUED'
  m.qt = num(now)
  stats.requeued = stats.requeued + 1
  put_meta(rid, m)
  redis.call('LPUSH', K_QUEUE, rid)
  return 'QUEUED'
end

-- Before any grant: a holder whose lease ran out loses its request back to the queue.
-- Answers the live lock (or nil) and whether a lock hash existed at all.
local function recover_orphan(now, max_attempts, dead_keep)
  local l = read_lock()
  if not l then return nil, false end
  if tonumber(l.exp) > now then return l, true end
  local m = get_meta(l.rid)
  if m and m.s == 'ACTIVE' then
    requeue_or_dead(l.rid, m, 'lease expired', now, max_attempts, dead_keep)
  end
  redis.call('DEL', K_LOCK)
  return nil, true
end

-- The claim index (another slot, written by the service after the script) may receive hints out
-- of order: batched, from two connections or two replicas. Each hint therefore carries a
-- version that rises with every change that hints, also across key expiry (as fences do), and
-- the index keeps the newest version's hint: the grant's "look when the lease ends" can never
-- overwrite a later abort's "look now".
local function index_hint(at, now_us)
  local stored = tonumber(redis.call('HGET', K_REQS, 'seq') or '0')
  local seq = num(math.max(stored + 1, now_us))
  redis.call('HSET', K_REQS, 'seq', seq)
  stats.index_at = at
  stats.index_seq = seq
end

-- The version of what a reader sees now: at least every hint already given, below every later one.
local function index_version(now_us)
  return redis.call('HGET', K_REQS, 'seq') or num(now_us)
end

-- Answers the lock as read_lock would now read it, so replies need no second read.
local function grant(token, rid, fence, now, now_us, lease, caller, via)
  local l = { token = token, rid = rid, fence = num(fence), exp = num(now + lease), lease = tostring(lease),
    caller = caller, via = via }
  redis.call('HSET', K_LOCK, 'token', token, 'rid', rid, 'fence', l.fence,
    'exp', l.exp, 'lease', l.lease, 'caller', caller, 'via', via)
  -- If this holder dies, the lcid needs rescue when its lease ends: tell the claim index. A
  -- handoff keeps the earlier hint, which is harmless: too early only costs the claim a look.
  if via ~= 'complete' then index_hint(now + lease, now_us) end
  return l
end

-- Makes rid the active request under the lock.
local function activate(rid, m, fence, now)
  if m.s == 'QUEUED' and m.qt then stats.waited = now - tonumber(m.qt) end
  m.s = 'ACTIVE'
  m.f = num(fence)
  m.at = num(now)
  put_meta(rid, m)
end

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

-- Idle lcids expire, but not before the last record they keep (results, DEAD requests) is due;
-- an lcid with a holder or waiting work never expires, so nothing acknowledged is silently dropped.
local function expire_idle(idle, now)
  local ttl = idle
  local last = redis.call('ZRANGE', K_PURGE, -1, -1, 'WITHSCORES')
  if last[2] then ttl = math.max(idle, tonumber(last[2]) - now) end
  for i = 3, 5 do redis.call('PEXPIRE', KEYS[i], ttl) end
end

local function persist_busy()
  for i = 3, 5 do redis.call('PERSIST', KEYS[i]) end
end

-- After a state change: was_idle says whether the lcid was idle before it (nil: not known).
-- A busy lcid that stays busy has no TTL to change.
local function touch(idle, now, was_idle)
  if redis.call('EXISTS', K_LOCK) == 0 and redis.call('LLEN', K_QUEUE) == 0 then
    expire_idle(idle, now)
  elseif was_idle ~= false then
    persist_busy()
  end
end
