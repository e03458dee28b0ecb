-- keepRun(ttl): a run's meta and log live ttl ms from now.
local function keepRun(ttl)
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
