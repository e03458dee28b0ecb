-- uses: lib-new-line
-- ARGV: seq, epoch, stateJson, ttlMs. Creates the thread unless it exists: 1
-- when created, 0 when it existed.
if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
return newLine(ARGV[1], ARGV[2], ARGV[3], ARGV[4])
