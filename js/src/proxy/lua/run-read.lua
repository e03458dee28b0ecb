-- A run's meta (HGETALL), whether its lease is held, and its log entries after
-- event ARGV[1] ({id, {q, seq, f, flags, t, text}} each). nil for no such run.
local meta = redis.call('HGETALL', KEYS[1])
if #meta == 0 then return nil end
return {meta, redis.call('EXISTS', KEYS[3]), redis.call('XRANGE', KEYS[2], '(' .. ARGV[1] .. '-0', '+')}
