-- uses: lib-new-line
-- ARGV: expectSeq, expectEpoch, seq, epoch, stateJson, ttlMs. Replaces the
-- thread's line with a new one (an empty log) if it is still at expectSeq /
-- expectEpoch, or gone (expired, or Redis came back empty): 1, else 0.
local head = redis.call('HMGET', KEYS[1], 'seq', 'epoch')
if head[1] and (head[1] ~= ARGV[1] or head[2] ~= ARGV[2]) then return 0 end
return newLine(ARGV[3], ARGV[4], ARGV[5], ARGV[6])
