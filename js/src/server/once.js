// once(store, key, effect): the idempotency key at the effect boundary, the
// twin of Python's agui_state_sync.once (same scope, record ids and record
// bytes, so a Node and a Python step on one store share their records).
//
// It runs `effect(key)` at most once per key and records its (JSON) result in
// the store; a replayed step (a re-sent resume, a retried graph node, another
// instance on a shared store) gets the recorded result back without running
// it. The effect is handed the key so the API it calls can deduplicate the one
// case no record can cover: a process that died after the effect and before
// the record was written.
//
// While an effect runs, a lease (a claim with a short TTL) keeps a concurrent
// caller from running it too: that caller gets AguiSyncError 'run-active' and
// may retry. A failed effect records nothing and gives the lease back (when the
// store has release(); otherwise it lapses after leaseMs), so it can be retried.
import { syncError, syncTypeError } from '../engine/errors.js';
import { jsonText } from '../engine/options.js';
import { checkKey, checkStore, positiveOption } from './store/contract.js';

export const ONCE_SCOPE = 'agui-once';
export const DEFAULT_LEASE_MS = 60_000;

function randomLease() {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

async function recorded(store, scope, key) {
  const text = await store.peek(scope, `result:${key}`);
  return text === null || text === undefined ? null : JSON.parse(text);
}

function onceOptions(options) {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw syncTypeError('invalid-options', 'once() options must be an object');
  }
  return {
    scope: checkKey(options?.scope ?? ONCE_SCOPE, 'once() option scope'),
    leaseMs: positiveOption(options?.leaseMs, 'once() option leaseMs', DEFAULT_LEASE_MS),
  };
}

/**
 * Runs `effect(key)` once per `key` in `store` and resolves to its result; a
 * replay resolves to the recorded result (what JSON keeps of it) without
 * running. Options: { scope = 'agui-once', leaseMs = 60000 }. Rejects with
 * 'run-active' while another caller runs the same key, with what the effect
 * threw (nothing recorded), or with 'store-unavailable' from the store.
 */
export async function once(store, key, effect, options) {
  checkStore(store, 'once() store');
  checkKey(key, 'once() key');
  if (typeof effect !== 'function') throw syncTypeError('invalid-argument', 'once() effect must be a function of the key');
  const { scope, leaseMs } = onceOptions(options);
  const done = await recorded(store, scope, key);
  if (done !== null) return done.result;
  const lease = JSON.stringify({ lease: randomLease() });
  const claim = await store.claim(scope, `lease:${key}`, lease, leaseMs);
  if (!claim.ok) {
    const now = await recorded(store, scope, key); // it may have completed between the peek and the claim
    if (now !== null) return now.result;
    throw syncError('run-active', `once(): the effect for key ${JSON.stringify(key)} is running elsewhere`);
  }
  let record;
  try {
    record = jsonText({ result: await effect(key) }, 'once() result');
  } catch (error) {
    if (typeof store.release === 'function') await store.release(scope, `lease:${key}`, lease);
    throw error;
  }
  const written = await store.claim(scope, `result:${key}`, record);
  // Only when the lease lapsed and another run recorded first: its result stands.
  return JSON.parse(written.ok ? record : written.existing).result;
}
