-- uses: lib-run-keep
-- The holder's lease on a live run, renewed. ARGV: owner, leaseMs, keepMs.
-- Returns 1, 2 when another instance asked for an abort (meta abort), or 0
-- when the lease is lost (the run may have been declared lost: stop it).
if redis.call('GET', KEYS[3]) ~= ARGV[1] or redis.call('HGET', KEYS[1], 'status') ~= 'live' then return 0 end
redis.call('PEXPIRE', KEYS[3], ARGV[2])
keepRun(ARGV[3])
if redis.call('HEXISTS', KEYS[1], 'abort') == 1 then return 2 end
return 1
