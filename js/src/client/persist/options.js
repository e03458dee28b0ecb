// createStateSync's `persist` option, checked (a TypeError 'invalid-options'
// naming the field otherwise).
import { syncTypeError } from '../../engine/errors.js';

const KNOWN = new Set(['key', 'storage', 'lock', 'lockTimeoutMs']);
const MAX_KEY_LENGTH = 512;
// How long a page waits for the key's lock: long enough for a reloaded page,
// whose predecessor's lock the browser releases as that page goes away.
const DEFAULT_LOCK_TIMEOUT_MS = 2000;

function bad(message) {
  return syncTypeError('invalid-options', `option persist${message}`);
}

function checkStorage(storage) {
  if (storage === undefined) return null;
  if (storage === null || typeof storage !== 'object') throw bad('.storage must be an object with get, set and delete');
  for (const name of ['get', 'set', 'delete']) {
    if (typeof storage[name] !== 'function') throw bad(`.storage.${name} must be a function (async)`);
  }
  return storage;
}

/**
 * { key, storage (null: the default, IndexedDB), lock, lockTimeoutMs } for a
 * `persist` option, or null when it is undefined.
 */
export function persistOptions(persist) {
  if (persist === undefined) return null;
  if (persist === null || typeof persist !== 'object' || Array.isArray(persist)) throw bad(' must be an object { key, storage? }');
  for (const name of Object.keys(persist)) {
    if (!KNOWN.has(name)) throw bad(` has an unknown field ${JSON.stringify(name)}`);
  }
  const { key, lock = true, lockTimeoutMs = DEFAULT_LOCK_TIMEOUT_MS } = persist;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw bad(`.key must be a non-empty string of at most ${MAX_KEY_LENGTH} characters`);
  }
  if (typeof lock !== 'boolean') throw bad('.lock must be a boolean');
  if (typeof lockTimeoutMs !== 'number' || !(lockTimeoutMs >= 0) || !Number.isFinite(lockTimeoutMs)) {
    throw bad('.lockTimeoutMs must be a number of milliseconds >= 0');
  }
  return { key, storage: checkStorage(persist.storage), lock, lockTimeoutMs };
}
