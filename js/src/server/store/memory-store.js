// memoryStore(): the store contract (contract.js) in this process's memory.
// Emitters bound to one key of it continue one another (an evicted thread's
// emitter, recreated, keeps its seq and epoch), and it holds consumeApproval's
// records; nothing survives the process. Every method finishes synchronously
// under its promise, so each is atomic like a Redis script.
import { DEFAULT_APPROVAL_TTL_MS, DEFAULT_TTL_MS, loggerOption, positiveOption } from './contract.js';
import { syncTypeError } from '../../engine/errors.js';

class MemoryStore {
  /** append() may leave the state out (contract.js). */
  incrementalState = true;
  #threads = new Map(); // key -> { epoch, seq, state (at stateSeq), stateSeq, events: [{ seq, text }], bytes, expires }
  #records = new Map(); // scope \0 id -> { value, expires }
  #watchers = new Map(); // key -> Set<onChange>
  #ttlMs;
  #now;
  log;

  constructor({ ttlMs, now, logger }) {
    this.#ttlMs = ttlMs;
    this.#now = now;
    this.log = logger;
  }

  async load(key) {
    const t = this.#live(key);
    return t ? { epoch: t.epoch, seq: t.seq, stateSeq: t.stateSeq, state: t.state, events: t.events.map((e) => e.text) } : null;
  }

  async init(key, { epoch, seq, state }) {
    if (this.#live(key)) return { ok: false };
    this.#put(key, { epoch, seq, state, stateSeq: seq, events: [], bytes: 0 });
    this.#notify(key);
    return { ok: true };
  }

  async append(key, { baseSeq, epoch, state, events, maxEvents, maxBytes }) {
    const t = this.#live(key);
    if (!t || t.seq !== baseSeq || t.epoch !== epoch) return { ok: false };
    for (const { seq, text, snapshot } of events) {
      if (snapshot) t.events = [];
      if (snapshot) t.bytes = 0;
      t.events.push({ seq, text });
      t.bytes += Buffer.byteLength(text);
      t.seq = seq;
    }
    if (state !== undefined) {
      t.state = state;
      t.stateSeq = t.seq;
    }
    // Oldest first, as the emitter's ring: by count, then by bytes; never an event after stateSeq.
    let drop = 0;
    while ((t.events.length - drop > maxEvents || (t.bytes > maxBytes && drop < t.events.length)) && t.events[drop].seq <= t.stateSeq) {
      t.bytes -= Buffer.byteLength(t.events[drop++].text);
    }
    if (drop) t.events.splice(0, drop);
    t.expires = this.#now() + this.#ttlMs;
    this.#notify(key);
    return { ok: true };
  }

  async head(key) {
    const t = this.#live(key);
    return t ? { epoch: t.epoch, seq: t.seq } : null;
  }

  async reset(key, expect, { epoch, seq, state }) {
    const t = this.#live(key);
    if (t && (t.seq !== expect.seq || t.epoch !== expect.epoch)) return { ok: false };
    this.#put(key, { epoch, seq, state, stateSeq: seq, events: [], bytes: 0 });
    this.#notify(key);
    return { ok: true };
  }

  async claim(scope, id, value, ttlMs = DEFAULT_APPROVAL_TTL_MS) {
    const name = `${scope}\u0000${id}`;
    const existing = this.#records.get(name);
    if (existing && existing.expires > this.#now()) return { ok: false, existing: existing.value };
    this.#records.set(name, { value, expires: this.#now() + ttlMs });
    return { ok: true };
  }

  async peek(scope, id) {
    const record = this.#records.get(`${scope}\u0000${id}`);
    return record && record.expires > this.#now() ? record.value : null;
  }

  async release(scope, id, value) {
    const name = `${scope}\u0000${id}`;
    const record = this.#records.get(name);
    if (!record || record.value !== value) return false;
    this.#records.delete(name);
    return true;
  }

  /** onChange() after every write to `key` (init, append, reset), on a later microtask. Returns unwatch(). */
  watch(key, onChange) {
    let set = this.#watchers.get(key);
    if (!set) this.#watchers.set(key, (set = new Set()));
    set.add(onChange);
    return () => {
      set.delete(onChange);
      if (set.size === 0 && this.#watchers.get(key) === set) this.#watchers.delete(key);
    };
  }

  #notify(key) {
    const set = this.#watchers.get(key);
    if (!set) return;
    queueMicrotask(() => {
      for (const onChange of [...set]) {
        try {
          onChange();
        } catch {
          // a watcher's failure is its own
        }
      }
    });
  }

  /** Nothing to release; for symmetry with redisStore(). */
  async close() {}

  #put(key, thread) {
    this.#sweep();
    this.#threads.set(key, { ...thread, expires: this.#now() + this.#ttlMs });
  }

  // The thread unless it expired (then it is gone).
  #live(key) {
    const t = this.#threads.get(key);
    if (t && t.expires <= this.#now()) this.#threads.delete(key);
    return t && t.expires > this.#now() ? t : null;
  }

  // Expired threads and records go when a thread is created: the maps stay bounded by what lives.
  #sweep() {
    const now = this.#now();
    for (const [key, t] of this.#threads) if (t.expires <= now) this.#threads.delete(key);
    for (const [name, r] of this.#records) if (r.expires <= now) this.#records.delete(name);
  }
}

/**
 * The in-process store: what an emitter without a store has always done,
 * plus continuity for emitters re-created on the same key in this process.
 * options: ttlMs (a thread not written for this long is forgotten; 1 day),
 * now (clock, ms), logger ({ warn, info }; console).
 */
export function memoryStore(options = {}) {
  if (options === null || typeof options !== 'object') throw syncTypeError('invalid-options', 'memoryStore() options must be an object');
  const { ttlMs, now = Date.now, logger, ...rest } = options;
  const unknown = Object.keys(rest);
  if (unknown.length) throw syncTypeError('invalid-options', `unknown memoryStore() option ${JSON.stringify(unknown[0])}`);
  if (typeof now !== 'function') throw syncTypeError('invalid-options', 'memoryStore() now must be a function');
  return new MemoryStore({
    ttlMs: positiveOption(ttlMs, 'memoryStore() ttlMs', DEFAULT_TTL_MS),
    now,
    logger: loggerOption(logger, 'memoryStore() logger'),
  });
}
