-- uses: lib-run-keep
-- A live run whose holder's lease expired (the instance died, or lost Redis)
-- ends with one RUN_ERROR, written once by whichever instance gets here first.
-- ARGV: the run's stream key, the RUN_ERROR's JSON, endedMs. The event is
-- framed as the proxy frames every event (`id: <key>:<n>`). Returns 1 when it
-- wrote it, 0 when the run is not live or its lease is still held.
if redis.call('HGET', KEYS[1], 'status') ~= 'live' or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
local n = tonumber(redis.call('HGET', KEYS[1], 'lastN')) + 1
local text = 'id: ' .. ARGV[1] .. ':' .. n .. '\ndata: ' .. ARGV[2] .. '\n\n'
local seq = redis.call('HGET', KEYS[1], 'seq')
redis.call('XADD', KEYS[2], n .. '-0', 'q', seq, 'f', 't', 't', text)
redis.call('HSET', KEYS[1], 'lastN', n, 'status', 'lost', 'bytes', tonumber(redis.call('HGET', KEYS[1], 'bytes')) + #text)
keepRun(ARGV[3])
redis.call('PUBLISH', KEYS[1], n)
return 1
