// The Lua scripts of redisStore() (redis-store.js). Each runs atomically in
// Redis, which is what keeps two instances writing one thread from forking its
// seq: an append lands only if the thread is still at the seq and epoch the
// writer computed its events from (optimistic concurrency), and its events,
// the new seq and the new state land together or not at all.
//
// Keys of one thread (KEYS[1..3]): meta (hash: seq, epoch, bytes, stateSeq),
// state (string: the state's JSON at stateSeq), log (stream: one entry per
// event, id "<seq>-0", field e = the event's JSON). The log is always a
// consecutive run of seqs ending at meta.seq (or empty), and it holds every
// event after stateSeq: the state at seq is the state at stateSeq with those
// applied. An append carries the state only now and then (the writer's
// choice), so a delta costs its own bytes, not the state's. A thread written
// before stateSeq existed has none: its state is at seq. Every write
// PUBLISHes the new seq on the meta key's name (redisStore's watch()).

// Drops the oldest log entries until at most maxEvents remain and their JSON
// adds up to at most maxBytes (the emitter's replay ring, by the same caps),
// but never an event after stateSeq: the state at seq needs those.
const TRIM = `
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
`;

const EXPIRE = `
local function expire(ttl)
  for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ttl) end
end
`;

/**
 * ARGV: baseSeq, epoch, stateJson ('' for none: the stored state and its
 * stateSeq stay), ttlMs, maxEvents, maxBytes, then per event (seq, '1' for a
 * snapshot else '0', eventJson). Returns {1, seq} when appended, {0, seq,
 * epoch} ('' for a missing thread) when the thread is not at baseSeq/epoch any
 * more. A snapshot empties the log first: nothing before it is ever replayed
 * (a client that old gets a snapshot). The writer sends the state with every
 * snapshot.
 */
export const APPEND = `${TRIM}${EXPIRE}
local head = redis.call('HMGET', KEYS[1], 'seq', 'epoch')
if head[1] ~= ARGV[1] or head[2] ~= ARGV[2] then
  return {0, head[1] or '', head[2] or ''}
end
local bytes = tonumber(redis.call('HGET', KEYS[1], 'bytes') or '0')
local seq = ARGV[1]
for i = 7, #ARGV, 3 do
  if ARGV[i + 1] == '1' then
    redis.call('DEL', KEYS[3])
    bytes = 0
  end
  redis.call('XADD', KEYS[3], ARGV[i] .. '-0', 'e', ARGV[i + 2])
  bytes = bytes + #ARGV[i + 2]
  seq = ARGV[i]
end
local stateSeq = tonumber(redis.call('HGET', KEYS[1], 'stateSeq') or ARGV[1])
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2], ARGV[3])
  stateSeq = tonumber(seq)
end
bytes = trim(KEYS[3], bytes, tonumber(ARGV[5]), tonumber(ARGV[6]), stateSeq)
redis.call('HSET', KEYS[1], 'seq', seq, 'bytes', bytes, 'stateSeq', stateSeq)
expire(ARGV[4])
redis.call('PUBLISH', KEYS[1], seq)
return {1, seq}
`;

/** Returns nil for an unknown thread, else {seq, epoch, stateSeq, stateJson, eventJson...} (the log, oldest first). */
export const LOAD = `
local head = redis.call('HMGET', KEYS[1], 'seq', 'epoch', 'stateSeq')
local state = redis.call('GET', KEYS[2])
if not head[1] or not state then return false end
local out = {head[1], head[2], head[3] or head[1], state}
for _, entry in ipairs(redis.call('XRANGE', KEYS[3], '-', '+')) do out[#out + 1] = entry[2][2] end
return out
`;

// A new line at (seq, epoch) with `state` and an empty log, announced: what
// INIT and RESET write.
const NEW_LINE = `${EXPIRE}
local function newLine(seq, epoch, state, ttl)
  redis.call('DEL', KEYS[3])
  redis.call('HSET', KEYS[1], 'seq', seq, 'epoch', epoch, 'bytes', 0, 'stateSeq', seq)
  redis.call('SET', KEYS[2], state)
  expire(ttl)
  redis.call('PUBLISH', KEYS[1], seq)
  return 1
end
`;

/** ARGV: seq, epoch, stateJson, ttlMs. Creates the thread unless it exists: 1 when created, 0 when it existed. */
export const INIT = `${NEW_LINE}
if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
return newLine(ARGV[1], ARGV[2], ARGV[3], ARGV[4])
`;

/**
 * ARGV: expectSeq, expectEpoch, seq, epoch, stateJson, ttlMs. Replaces the
 * thread's line with a new one (an empty log) if it is still at expectSeq /
 * expectEpoch, or gone (expired, or Redis came back empty): 1, else 0.
 */
export const RESET = `${NEW_LINE}
local head = redis.call('HMGET', KEYS[1], 'seq', 'epoch')
if head[1] and (head[1] ~= ARGV[1] or head[2] ~= ARGV[2]) then return 0 end
return newLine(ARGV[3], ARGV[4], ARGV[5], ARGV[6])
`;

/** KEYS[1]: a record; ARGV: value, ttlMs. Sets it if absent: nil; else its value (SET NX + GET, atomically). */
export const CLAIM = `
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`;
