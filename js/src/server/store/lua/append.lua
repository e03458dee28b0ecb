-- uses: lib-trim lib-expire
-- ARGV: baseSeq, epoch, stateJson ('' for none: the stored state and its
-- stateSeq stay), ttlMs, maxEvents, maxBytes, then per event (seq, '1' for a
-- snapshot else '0', eventJson). Returns {1, seq} when appended, {0, seq,
-- epoch} ('' for a missing thread) when the thread is not at baseSeq/epoch any
-- more. A snapshot empties the log first: nothing before it is ever replayed
-- (a client that old gets a snapshot). The writer sends the state with every
-- snapshot.
local head = redis.call('HMGET', KEYS[1], 'seq', 'epoch')
if head[1] ~= ARGV[1] or head[2] ~= ARGV[2] then
  return {0, head[1] or '', head[2] or ''}
end
local bytes = tonumber(redis.call('HGET', KEYS[1], 'bytes') or '0')
local seq = ARGV[1]
for i = 7, #ARGV, 3 do
  if ARGV[i + 1] == '1' then
    redis.call('DEL', KEYS[3])
    bytes = 0
  end
  redis.call('XADD', KEYS[3], ARGV[i] .. '-0', 'e', ARGV[i + 2])
  bytes = bytes + #ARGV[i + 2]
  seq = ARGV[i]
end
local stateSeq = tonumber(redis.call('HGET', KEYS[1], 'stateSeq') or ARGV[1])
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2], ARGV[3])
  stateSeq = tonumber(seq)
end
bytes = trim(KEYS[3], bytes, tonumber(ARGV[5]), tonumber(ARGV[6]), stateSeq)
redis.call('HSET', KEYS[1], 'seq', seq, 'bytes', bytes, 'stateSeq', stateSeq)
expire(ARGV[4])
redis.call('PUBLISH', KEYS[1], seq)
return {1, seq}
