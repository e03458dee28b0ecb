-- uses: lib-expire
-- newLine(seq, epoch, state, ttl): a new line at (seq, epoch) with `state` and an
-- empty log, announced: what init and reset write.
local function newLine(seq, epoch, state, ttl)
  redis.call('DEL', KEYS[3])
  redis.call('HSET', KEYS[1], 'seq', seq, 'epoch', epoch, 'bytes', 0, 'stateSeq', seq)
  redis.call('SET', KEYS[2], state)
  expire(ttl)
  redis.call('PUBLISH', KEYS[1], seq)
  return 1
end
