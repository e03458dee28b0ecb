-- trim(log, bytes, maxEvents, maxBytes, stateSeq): drops the oldest log entries
-- until at most maxEvents remain and their JSON adds up to at most maxBytes (the
-- emitter's replay ring, by the same caps), but never an event after stateSeq:
-- the state at seq needs those. Returns the log's bytes after the trim.
local function trim(log, bytes, maxEvents, maxBytes, stateSeq)
  local len = redis.call('XLEN', log)
  local cursor = '-'
  while len > 0 and (len > maxEvents or bytes > maxBytes) do
    local batch = redis.call('XRANGE', log, cursor, '+', 'COUNT', 128)
    local ids = {}
    for _, entry in ipairs(batch) do
      if not (len > 0 and (len > maxEvents or bytes > maxBytes)) then break end
      if tonumber(string.match(entry[1], '^(%d+)')) > stateSeq then break end
      bytes = bytes - #entry[2][2]
      len = len - 1
      ids[#ids + 1] = entry[1]
      cursor = '(' .. entry[1]
    end
    if #ids == 0 then break end
    redis.call('XDEL', log, unpack(ids))
  end
  return bytes
end
