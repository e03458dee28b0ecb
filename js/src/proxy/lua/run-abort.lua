-- Asks a live run's holder to abort it (the holder sees it at its next lease
-- renewal), if the credentials' fingerprint is the run's. ARGV: fingerprint.
-- Returns 1 when asked, 0 when the run is not live or not this caller's.
if redis.call('HGET', KEYS[1], 'status') ~= 'live' or redis.call('HGET', KEYS[1], 'fingerprint') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'abort', '1')
return 1
