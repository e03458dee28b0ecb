-- KEYS[1]: a record; ARGV: value, ttlMs. Sets it if absent: nil; else its value
-- (SET NX + GET, atomically).
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
