-- uses: lib-run-keep
-- A proxy run's log (the proxy's, not the emitter's: KEYS meta, log, lease of
-- one run). ARGV: threadId, runId, fingerprint, owner, leaseMs, keepMs.
-- Creates the run as 'live', held by owner for leaseMs. Returns 1, or 0 when
-- the run exists already.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'threadId', ARGV[1], 'runId', ARGV[2], 'fingerprint', ARGV[3], 'owner', ARGV[4],
  'status', 'live', 'lastN', 0, 'seq', '', 'bytes', 0, 'startedN', 0)
redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[5])
keepRun(ARGV[6])
return 1
