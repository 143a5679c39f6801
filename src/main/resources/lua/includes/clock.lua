-- Redis TIME is the only clock: leases are judged by the server every caller shares.

local function clock()
  local t = redis.call('TIME')
  local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  return math.floor(us / 1000), us
end

local function num(s) return string.format('%.0f', s) end
