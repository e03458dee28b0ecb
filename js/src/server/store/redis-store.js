// redisStore(): the store contract (contract.js) in Redis, through the
// maintained `redis` client (node-redis, an optional peer dependency loaded on
// first use, so that nobody who does not use Redis needs it). One thread is a
// hash (seq, epoch, log bytes), a string (the state) and a stream (the event
// log), under one hash tag so that a Redis Cluster keeps them on one slot;
// every write is one Lua script (redis-scripts.js), so it is atomic.
// Unreachable Redis: commands fail fast (no offline queue, a command timeout)
// and the client keeps reconnecting; the emitters fall back (durable-emitter.js).
import { claimKey, threadBase } from './key-layout.js';
import { syncError, syncTypeError } from '../../engine/errors.js';
import { DEFAULT_APPROVAL_TTL_MS, DEFAULT_TTL_MS, loggerOption, positiveOption } from './contract.js';
import { scriptText } from './redis-scripts.js';
import { kStoreCommand, kStoreScript, kStoreWatch } from '../../engine/internals.js';

const MAX_ID_LENGTH = 1024;

async function closeClient(client) {
  if (!client) return;
  try {
    if (client.isReady) await client.close();
    else client.destroy(); // connecting or reconnecting: stop trying
  } catch {
    // already closed
  }
}

function closedError() {
  return unreachable(new Error('the store is closed'));
}

// Closes a client made after close() and gives the error for the call that made it.
async function closedWith(client) {
  await closeClient(client);
  return closedError();
}

function unreachable(error) {
  return syncError('store-unavailable', `the Redis store is unreachable (${error?.message ?? error})`, { cause: error });
}

class RedisStore {
  /** append() may leave the state out (contract.js): a delta costs its own bytes. */
  incrementalState = true;
  #options;
  #client = null; // connected lazily
  #connecting = null;
  #starting = null; // the client's creation (the npm package's import), once
  #reachable = true; // what was last logged
  #shas = new Map(); // script text -> SHA1, as SCRIPT LOAD answered
  #subscriber = null; // a second connection, for watch() (pub/sub), made on first use
  #subscriberStart = null; // its connect, once
  #watchers = new Map(); // channel (a thread's meta key) -> Set<onChange>
  #subscribed = new Set(); // channels Redis confirmed (node-redis renews them after a reconnect)
  #subscribing = new Set(); // SUBSCRIBE under way
  // close() is final: a command after it (a late write of a run being torn down) fails as
  // unreachable rather than opening a connection nobody closes, which would keep the
  // process alive reconnecting to a Redis that is gone.
  #closed = false;
  log;

  constructor(options) {
    this.#options = options;
    this.log = options.log;
    this.prefix = options.prefix;
  }

  async load(key) {
    const reply = await this.#script('load', this.#keys(key), []);
    if (reply === null) return null;
    const [seq, epoch, stateSeq, state, ...events] = reply;
    return { seq: Number(seq), epoch, stateSeq: Number(stateSeq), state, events };
  }

  async init(key, { epoch, seq, state }) {
    const created = await this.#script('init', this.#keys(key), [String(seq), epoch, state, String(this.#options.ttlMs)]);
    return { ok: created === 1 };
  }

  async append(key, { baseSeq, epoch, state, events, maxEvents, maxBytes }) {
    const args = [String(baseSeq), epoch, state ?? '', String(this.#options.ttlMs), String(maxEvents), String(maxBytes)];
    for (const e of events) args.push(String(e.seq), e.snapshot ? '1' : '0', e.text);
    const [ok] = await this.#script('append', this.#keys(key), args);
    return { ok: ok === 1 };
  }

  async head(key) {
    const [seq, epoch] = await this.#command(['HMGET', this.#keys(key)[0], 'seq', 'epoch']);
    return seq === null || epoch === null ? null : { seq: Number(seq), epoch };
  }

  async reset(key, expect, { epoch, seq, state }) {
    const args = [String(expect.seq), expect.epoch, String(seq), epoch, state, String(this.#options.ttlMs)];
    return { ok: (await this.#script('reset', this.#keys(key), args)) === 1 };
  }

  async claim(scope, id, value, ttlMs = this.#options.approvalTtlMs) {
    const existing = await this.#script('claim', [this.#claimKey(scope, id)], [value, String(ttlMs)]);
    return existing === null ? { ok: true } : { ok: false, existing };
  }

  async peek(scope, id) {
    return this.#command(['GET', this.#claimKey(scope, id)]);
  }

  async release(scope, id, value) {
    return (await this.#script('release', [this.#claimKey(scope, id)], [value])) === 1;
  }

  /** The node-redis client (connected on first use): for an app's own commands next to ours. */
  async client() {
    return this.#ready();
  }

  /**
   * onChange() after every write to `key` by any instance (the scripts
   * PUBLISH on the thread's meta key name), over a second connection made on
   * first use. Returns unwatch(). While Redis is unreachable nothing is
   * heard; the emitters' safety-net poll still finds the writes.
   */
  watch(key, onChange) {
    return this[kStoreWatch](this.#keys(key)[0], onChange);
  }

  /** watch() of a channel by its full key name (the proxy's run logs publish on their own meta key). */
  [kStoreWatch](channel, onChange) {
    let set = this.#watchers.get(channel);
    if (!set) {
      this.#watchers.set(channel, (set = new Set()));
      this.#subscribe(channel).catch(() => {}); // retried when the subscriber (re)connects
    }
    set.add(onChange);
    return () => {
      set.delete(onChange);
      if (set.size > 0 || this.#watchers.get(channel) !== set) return;
      this.#watchers.delete(channel);
      if (this.#subscribed.delete(channel)) this.#subscriber?.unsubscribe(channel).catch(() => {});
    };
  }

  /** Closes the connections this store opened (a client passed in stays the app's). */
  async close() {
    this.#closed = true;
    const [client, subscriber] = [this.#client, this.#subscriber];
    this.#client = null;
    this.#subscriber = null;
    this.#subscriberStart = null;
    this.#connecting = null;
    this.#starting = null;
    this.#watchers.clear();
    this.#subscribed.clear();
    await closeClient(subscriber);
    if (!this.#options.client) await closeClient(client);
  }

  async #subscribe(channel) {
    const subscriber = await this.#subscriberReady();
    if (this.#subscribed.has(channel) || this.#subscribing.has(channel) || !this.#watchers.has(channel)) return;
    this.#subscribing.add(channel);
    try {
      await subscriber.subscribe(channel, () => this.#changed(channel));
      this.#subscribed.add(channel);
    } finally {
      this.#subscribing.delete(channel);
    }
  }

  #changed(channel) {
    for (const onChange of [...(this.#watchers.get(channel) ?? [])]) {
      try {
        onChange();
      } catch {
        // a watcher's failure is its own
      }
    }
  }

  // One subscriber connection, started once; a failed start is tried again by the next watch().
  #subscriberReady() {
    this.#subscriberStart ??= this.#startSubscriber().catch((error) => {
      this.#subscriberStart = null;
      throw error;
    });
    return this.#subscriberStart;
  }

  async #startSubscriber() {
    const subscriber = this.#options.client ? this.#options.client.duplicate() : await this.#newClient();
    if (this.#closed) throw await closedWith(subscriber);
    subscriber.on('error', () => {}); // the main connection reports an outage
    // Channels whose SUBSCRIBE failed while Redis was away are tried again once it is back.
    subscriber.on('ready', () => {
      for (const channel of this.#watchers.keys()) if (!this.#subscribed.has(channel)) this.#subscribe(channel).catch(() => {});
    });
    this.#subscriber = subscriber;
    try {
      await subscriber.connect();
    } catch (error) {
      this.#subscriber = null;
      await closeClient(subscriber);
      throw error;
    }
    return subscriber;
  }

  #claimKey(scope, id) {
    if (id.length > MAX_ID_LENGTH) throw syncTypeError('invalid-argument', `a claim id must be at most ${MAX_ID_LENGTH} characters`);
    return claimKey(this.prefix, scope, id);
  }

  #keys(key) {
    const base = threadBase(this.prefix, key);
    return [`${base}:meta`, `${base}:state`, `${base}:log`];
  }

  /**
   * Runs the Lua script `text` (assembled: redis-scripts.js) on this store's
   * connection, as the store's own scripts run: for the proxy's run logs.
   */
  [kStoreScript](text, keys, args) {
    return this.#runScript(text, keys, args);
  }

  /** One command on this store's connection, with its timeout (store-unavailable when unreachable). */
  [kStoreCommand](args) {
    return this.#command(args);
  }

  async #script(name, keys, args) {
    return this.#runScript(await scriptText(name), keys, args);
  }

  // EVALSHA (the script loaded once), and EVAL when Redis forgot it (a restart without persistence).
  async #runScript(text, keys, args) {
    const tail = [String(keys.length), ...keys, ...args];
    if (!this.#shas.has(text)) this.#shas.set(text, await this.#command(['SCRIPT', 'LOAD', text]));
    try {
      return await this.#command(['EVALSHA', this.#shas.get(text), ...tail]);
    } catch (error) {
      if (!String(error?.message).startsWith('NOSCRIPT')) throw error;
      return this.#command(['EVAL', text, ...tail]);
    }
  }

  async #command(args) {
    const client = await this.#ready();
    try {
      return await client.sendCommand(args, { timeout: this.#options.timeoutMs });
    } catch (error) {
      if (String(error?.message).startsWith('NOSCRIPT')) throw error;
      throw unreachable(error);
    }
  }

  // The connected client; rejects at once while Redis is unreachable (the client reconnects meanwhile).
  // Requests that come while the first connection is still being made wait for it (within timeoutMs),
  // on the one client: a fresh proxy queues them rather than failing them (issue 38).
  async #ready() {
    if (this.#closed) throw closedError();
    this.#starting ??= this.#options.client ? Promise.resolve(this.#options.client) : this.#createClient();
    const started = await this.#starting;
    // close() came while the client was being made: it is this call's to close.
    if (this.#closed) throw await closedWith(this.#options.client ? null : started);
    const client = (this.#client ??= started);
    if (!client.isReady) {
      if (!client.isOpen) this.#connecting ??= client.connect().catch(() => {}).finally(() => { this.#connecting = null; });
      await readyWithin(client, this.#options.timeoutMs);
      if (!client.isReady) throw unreachable(new Error('not connected'));
    }
    return client;
  }

  async #createClient() {
    const client = await this.#newClient();
    client.on('error', (error) => this.#unreachable(error));
    client.on('ready', () => this.#reachableAgain());
    return client;
  }

  async #newClient() {
    let createClient;
    try {
      ({ createClient } = await import('redis'));
    } catch (error) {
      throw syncError('load-failed', 'redisStore() needs the npm package `redis` (npm install redis)', { cause: error });
    }
    const { url, timeoutMs } = this.#options;
    return createClient({
      url,
      disableOfflineQueue: true, // a command while disconnected fails now, not when Redis returns
      socket: { connectTimeout: timeoutMs, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 1000) },
    });
  }

  #unreachable(error) {
    if (!this.#reachable) return;
    this.#reachable = false;
    this.log('warn', `Redis store ${this.#options.url ?? ''} unreachable (${error?.message ?? error}); reconnecting`);
  }

  #reachableAgain() {
    if (this.#reachable) return;
    this.#reachable = true;
    this.log('info', `Redis store ${this.#options.url ?? ''} reachable again`);
  }
}

/**
 * The Redis store. options: url ('redis://127.0.0.1:6379'), or client (a
 * node-redis client you own); prefix ('agui:'); ttlMs (a thread not written
 * for this long expires; 1 day); approvalTtlMs (consumeApproval's records; 7
 * days); timeoutMs (per command, and how long an operation waits for a
 * connection; 2000); logger ({ warn, info }; console).
 */
export function redisStore(options = {}) {
  if (options === null || typeof options !== 'object') throw syncTypeError('invalid-options', 'redisStore() options must be an object');
  const { url, client, prefix = 'agui:', ttlMs, approvalTtlMs, timeoutMs, logger, ...rest } = options;
  const unknown = Object.keys(rest);
  if (unknown.length) throw syncTypeError('invalid-options', `unknown redisStore() option ${JSON.stringify(unknown[0])}`);
  if (url !== undefined && typeof url !== 'string') throw syncTypeError('invalid-options', 'redisStore() url must be a string');
  if (client !== undefined && (client === null || typeof client.sendCommand !== 'function')) {
    throw syncTypeError('invalid-options', 'redisStore() client must be a node-redis client');
  }
  if (typeof prefix !== 'string') throw syncTypeError('invalid-options', 'redisStore() prefix must be a string');
  return new RedisStore({
    url, client, prefix,
    ttlMs: positiveOption(ttlMs, 'redisStore() ttlMs', DEFAULT_TTL_MS),
    approvalTtlMs: positiveOption(approvalTtlMs, 'redisStore() approvalTtlMs', DEFAULT_APPROVAL_TTL_MS),
    timeoutMs: positiveOption(timeoutMs, 'redisStore() timeoutMs', 2000),
    log: loggerOption(logger, 'redisStore() logger'),
  });
}

// Resolves once `client` is ready, or after ms, whichever comes first.
function readyWithin(client, ms) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    client.on('ready', done);
  });
}
