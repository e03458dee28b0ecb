-- uses: lib-run-trim lib-run-keep
-- Appends events to a live run's log, if owner still holds its lease.
-- ARGV: owner, leaseMs, keepMs (while live), endedMs (after the end), maxEvents,
-- maxBytes, then per event: n, seq (the seq a client holds after it, '' for
-- none), flags ('s' a state event, 't' RUN_FINISHED / RUN_ERROR, 'r' the run's
-- first RUN_STARTED), its framed text. Entry id `<n>-0`, fields q, f, t. A
-- terminal event ends the run: status 'finished', the lease dropped, the keys
-- kept endedMs. Renews the lease. PUBLISHes lastN on the meta key's name.
-- Returns {1, lastN}, or {0, lastN} when the lease is lost or the run is over
-- (another instance declared it lost: nothing was appended).
local lastN = tonumber(redis.call('HGET', KEYS[1], 'lastN') or '0')
if redis.call('GET', KEYS[3]) ~= ARGV[1] or redis.call('HGET', KEYS[1], 'status') ~= 'live' then
  return {0, lastN}
end
local bytes = tonumber(redis.call('HGET', KEYS[1], 'bytes'))
local seq = redis.call('HGET', KEYS[1], 'seq')
local ended = false
for i = 7, #ARGV, 4 do
  lastN = lastN + 1
  local flags = ARGV[i + 2]
  redis.call('XADD', KEYS[2], lastN .. '-0', 'q', ARGV[i + 1], 'f', flags, 't', ARGV[i + 3])
  bytes = bytes + #ARGV[i + 3]
  seq = ARGV[i + 1]
  if string.find(flags, 'r', 1, true) then redis.call('HSET', KEYS[1], 'startedN', lastN, 'startedText', ARGV[i + 3]) end
  if string.find(flags, 't', 1, true) then ended = true end
end
bytes = trimRun(KEYS[1], KEYS[2], bytes, tonumber(ARGV[5]), tonumber(ARGV[6]))
redis.call('HSET', KEYS[1], 'lastN', lastN, 'seq', seq, 'bytes', bytes)
if ended then
  redis.call('HSET', KEYS[1], 'status', 'finished')
  redis.call('DEL', KEYS[3])
  keepRun(ARGV[4])
else
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
  keepRun(ARGV[3])
end
redis.call('PUBLISH', KEYS[1], lastN)
return {1, lastN}
