-- Returns nil for an unknown thread, else {seq, epoch, stateSeq, stateJson,
-- eventJson...} (the log, oldest first).
local head = redis.call('HMGET', KEYS[1], 'seq', 'epoch', 'stateSeq')
local state = redis.call('GET', KEYS[2])
if not head[1] or not state then return false end
local out = {head[1], head[2], head[3] or head[1], state}
for _, entry in ipairs(redis.call('XRANGE', KEYS[3], '-', '+')) do out[#out + 1] = entry[2][2] end
return out
