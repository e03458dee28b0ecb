// The proxy's run logs in its Redis store (redisStore(): --redis), so that
// any instance can serve a run's stream (docs/proxy.md#run-logs-in-the-store).
// One run is three keys under the hash tag {run:<stream key>}
// (a Redis Cluster keeps them on one slot): meta (a hash: threadId, runId,
// fingerprint, owner, status live | finished | lost, lastN, seq, bytes,
// startedN, startedText, trimmedSeq), log (a Stream, entry `<n>-0` per event:
// q its seq, f its flags, t its framed text) and lease (the holder's id, with
// a TTL the holder renews). The thread's running run is named by
// <prefix>{<threadId>}:live, and the live runs of a runId by the set
// <prefix>{runid:<runId>}:runs (an X-AGUI-Abort names only the runId, and may
// reach an instance that serves none of the run's clients). Every write is one Lua script (lua/), so it is
// atomic, and PUBLISHes on the meta key's name, which store.watch('run:<key>')
// hears. This module is only I/O: what is written when is the runs' business.
import { runBase, runIdKey, threadBase } from '../server/store/key-layout.js';
import { kStoreCommand, kStoreScript, kStoreWatch } from '../engine/internals.js';
import { scriptText } from '../server/store/redis-scripts.js';
import { runError } from './events.js';

const LUA = new URL('./lua/', import.meta.url);

/** The store's run logs, or null for a store that cannot keep them (memoryStore(): one process). */
export function runStoreFor(store, options) {
  if (store === null || typeof store[kStoreScript] !== 'function' || typeof store[kStoreCommand] !== 'function' || typeof store[kStoreWatch] !== 'function') {
    return null;
  }
  return new RunStore(store, options);
}


function pairs(list) {
  const out = {};
  for (let i = 0; i + 1 < list.length; i += 2) out[list[i]] = list[i + 1];
  return out;
}

const seqOf = (text) => (text === '' || text === undefined || text === null ? null : Number(text));

class RunStore {
  #store;
  #options; // { owner, leaseMs, keepMs, endedMs, maxEvents, maxBytes }
  owner;

  constructor(store, options) {
    this.#store = store;
    this.#options = options;
    this.owner = options.owner;
  }

  #keys(key) {
    const base = runBase(this.#store.prefix, key);
    return [`${base}:meta`, `${base}:log`, `${base}:lease`];
  }

  #presentKey(key) {
    return `${runBase(this.#store.prefix, key)}:present`;
  }

  #liveKey(threadId) {
    return `${threadBase(this.#store.prefix, threadId)}:live`;
  }

  #runIdKey(runId) {
    return runIdKey(this.#store.prefix, runId);
  }

  async #script(name, keys, args) {
    return this.#store[kStoreScript](await scriptText(name, LUA), keys, args);
  }

  /** Creates a held run's log and names it the thread's running run. */
  async open({ key, threadId, runId, fingerprint }) {
    const { owner, leaseMs, keepMs } = this.#options;
    await this.#script('run-open', this.#keys(key), [threadId, runId, fingerprint, owner, String(leaseMs), String(keepMs)]);
    await this.#store[kStoreCommand](['SET', this.#liveKey(threadId), key, 'PX', String(keepMs)]);
    await this.#store[kStoreCommand](['SADD', this.#runIdKey(runId), key]);
    await this.#store[kStoreCommand](['PEXPIRE', this.#runIdKey(runId), String(keepMs)]);
  }

  /** Appends the core's entries ({ n, seq, flags: 's' state, 't' terminal, 'r' the run's RUN_STARTED, text }): { ok, lastN }. */
  async append(key, entries) {
    const { owner, leaseMs, keepMs, endedMs, maxEvents, maxBytes } = this.#options;
    const args = [owner, String(leaseMs), String(keepMs), String(endedMs), String(maxEvents), String(maxBytes)];
    for (const entry of entries) args.push(String(entry.n), entry.seq === null ? '' : String(entry.seq), entry.flags, entry.text);
    const [ok, lastN] = await this.#script('run-append', this.#keys(key), args);
    return { ok: ok === 1, lastN: Number(lastN) };
  }

  /** Renews the holder's lease: 'held', 'abort' (another instance asked for one) or 'lost'. */
  async renew(key, threadId, runId) {
    const { owner, leaseMs, keepMs } = this.#options;
    const answer = await this.#script('run-renew', this.#keys(key), [owner, String(leaseMs), String(keepMs)]);
    if (answer !== 0) {
      await this.#store[kStoreCommand](['PEXPIRE', this.#liveKey(threadId), String(keepMs)]);
      await this.#store[kStoreCommand](['PEXPIRE', this.#runIdKey(runId), String(keepMs)]);
    }
    return answer === 2 ? 'abort' : answer === 1 ? 'held' : 'lost';
  }

  /** Ends a live run whose lease expired with RUN_ERROR 'run-lost' (once, whoever comes first). */
  async lose(key) {
    const event = runError('run-lost', 'the instance that held the run\'s upstream connection is gone; the run cannot go on');
    return (await this.#script('run-lose', this.#keys(key), [key, JSON.stringify(event), String(this.#options.endedMs)])) === 1;
  }

  /**
   * The run `key` as stored: null when there is none, else { meta, leased,
   * entries } with the entries after event `afterN` ({ n, seq, state,
   * terminal, started, text }).
   */
  async read(key, afterN = 0) {
    const reply = await this.#script('run-read', this.#keys(key), [String(afterN)]);
    if (reply === null) return null;
    const [rawMeta, leased, rawEntries] = reply;
    const m = pairs(rawMeta);
    const meta = {
      key, threadId: m.threadId, runId: m.runId, fingerprint: m.fingerprint, owner: m.owner, status: m.status,
      lastN: Number(m.lastN), seq: seqOf(m.seq), startedN: Number(m.startedN ?? 0), startedText: m.startedText ?? '',
      trimmedSeq: seqOf(m.trimmedSeq),
    };
    const entries = rawEntries.map(([id, fields]) => {
      const f = pairs(fields);
      return { n: Number(id.split('-')[0]), seq: seqOf(f.q), state: f.f.includes('s'), terminal: f.f.includes('t'), started: f.f.includes('r'), text: f.t };
    });
    return { meta, leased: leased === 1, entries };
  }

  /** The stream key of the thread's running run (maybe over since), or null. */
  liveRunKey(threadId) {
    return this.#store[kStoreCommand](['GET', this.#liveKey(threadId)]);
  }

  /** An instance serving clients of `key` says so, for `ms` (the holder's grace period waits for them). */
  markPresent(key, ms) {
    return this.#store[kStoreCommand](['SET', this.#presentKey(key), this.owner, 'PX', String(ms)]);
  }

  async present(key) {
    return (await this.#store[kStoreCommand](['EXISTS', this.#presentKey(key)])) === 1;
  }

  /** Asks the holder to abort (seen at its next renewal) if `fingerprint` is the run's starter's. */
  async requestAbort(key, fingerprint) {
    return (await this.#script('run-abort', this.#keys(key), [fingerprint])) === 1;
  }

  /** Asks the holders of every live run of `runId` started with `fingerprint` to abort: how many were asked. */
  async requestAbortOf(runId, fingerprint) {
    const keys = await this.#store[kStoreCommand](['SMEMBERS', this.#runIdKey(runId)]);
    let asked = 0;
    for (const key of keys ?? []) if (await this.requestAbort(key, fingerprint)) asked++;
    return asked;
  }

  /** onChange() after every write to the run's log by any instance; returns unwatch(). */
  watch(key, onChange) {
    return this.#store[kStoreWatch](this.#keys(key)[0], onChange);
  }
}
