-- expire(ttl): the thread's three keys live ttl ms from its last write.
local function expire(ttl)
  for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ttl) end
end
