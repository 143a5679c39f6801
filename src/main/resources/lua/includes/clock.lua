-- Redis TIME is the only clock: leases are judged by the server every caller shares.

local function clock()
  local t = redis.call('TIME')
  -- (Arithmetic converts the reply's strings itself, cheaper than two tonumber calls.)
  local us = t[1] * 1000000 + t[2]
  return (us - us % 1000) / 1000, us
end

-- A number as Redis and the service read it: integer digits. Memoized, since a script formats the
-- same few values (now, a fence, an expiry) several times and each format is a libc printf; for
-- the same reason scripts pass numeric command arguments as strings (Redis would format them too).
local formatted = {}
local function num(n)
  local s = formatted[n]
  if not s then
    s = string.format('%.0f', n)
    formatted[n] = s
  end
  return s
end
