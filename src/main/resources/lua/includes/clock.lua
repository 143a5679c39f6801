-- Redis TIME is the only clock: leases are judged by the server every caller shares.

-- A number as Redis and the service read it: integer digits. Memoized, since a script formats the
-- same few values (now, a fence, a due time) several times and each format is a libc printf; for
-- the same reason scripts pass numeric command arguments as strings (Redis would format them too),
-- and answer numbers as Lua numbers (Redis turns those into integer replies without a printf).
local formatted = {}
local function num(n)
  local s = formatted[n]
  if not s then
    s = string.format('%.0f', n)
    formatted[n] = s
  end
  return s
end

-- Now in ms and in µs. Their digits come from TIME's own strings, so num() of either is free.
local function clock()
  local t = redis.call('TIME')
  local s, u = t[1], t[2]
  if #u < 6 then u = string.sub('00000', #u) .. u end
  -- (Arithmetic converts the reply's strings itself, cheaper than two tonumber calls.)
  local us = s * 1000000 + t[2]
  local ms = (us - us % 1000) / 1000
  formatted[us] = s .. u
  formatted[ms] = s .. string.sub(u, 1, 3)
  return ms, us
end
