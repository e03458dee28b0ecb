-- trimRun(meta, log, bytes, maxEvents, maxBytes): drops a run log's oldest
-- entries until at most maxEvents remain and their framed text adds up to at
-- most maxBytes, keeping at least the newest one, and records the seq a client
-- held after the newest dropped one (meta trimmedSeq: a resume from right
-- there can still be exact). Returns the log's bytes after the trim.
local function trimRun(meta, log, bytes, maxEvents, maxBytes)
  local len = redis.call('XLEN', log)
  while len > 1 and (len > maxEvents or bytes > maxBytes) do
    local batch = redis.call('XRANGE', log, '-', '+', 'COUNT', 64)
    local ids = {}
    local trimmedSeq = nil
    for _, entry in ipairs(batch) do
      if not (len > 1 and (len > maxEvents or bytes > maxBytes)) then break end
      bytes = bytes - #entry[2][6]
      len = len - 1
      trimmedSeq = entry[2][2]
      ids[#ids + 1] = entry[1]
    end
    if #ids == 0 then break end
    redis.call('XDEL', log, unpack(ids))
    redis.call('HSET', meta, 'trimmedSeq', trimmedSeq)
  end
  return bytes
end
