// One writer per checkpoint key (issue 16, "two tabs"): a StateSync holds the
// key's lock for as long as it persists. With the Web Locks API
// (navigator.locks: every tab of the origin) that is a real cross-tab lock,
// released by the browser when the tab goes away; elsewhere (Node, old
// browsers) an in-process lock per storage adapter stands in for it, so two
// StateSyncs sharing one adapter behave as two tabs would.
//
// Why a lock rather than last-writer-wins: a checkpoint carries one client's
// pending edits. Two live tabs restoring the same one would both send and
// settle them, and each tab's later checkpoints would drop the other's edits
// (and with an explicit clientId, continue the same editId counter). Only one
// holder may restore and write a key.

export const LOCK_PREFIX = 'agui-state-sync:checkpoint:';

// In-process locks: storage adapter -> Map(key -> waiters; the first holds it).
const localLocks = new WeakMap();

function webLocks() {
  const locks = globalThis.navigator?.locks;
  return locks && typeof locks.request === 'function' ? locks : null;
}

// navigator.locks.request with a timeout: the release function, or null if
// another holder kept it for `timeoutMs` (a reloaded page may ask before the
// old page's lock is released, hence the wait). A free lock is taken at once
// (ifAvailable), so a timeout of 0 never loses a race with its own timer.
async function requestWebLock(locks, name, timeoutMs) {
  let release;
  const held = new Promise((resolve) => {
    release = resolve;
  });
  const attempt = (options) => new Promise((granted, refused) => {
    locks.request(name, options, (lock) => {
      granted(lock !== null);
      return lock === null ? undefined : held; // kept until release()
    }).catch(refused);
  });
  if (await attempt({ ifAvailable: true })) return () => release();
  if (!(timeoutMs > 0)) return null;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    await attempt({ signal: controller.signal });
    return () => release();
  } catch (error) {
    if (controller.signal.aborted) return null; // held elsewhere all that time
    throw error; // the API refused (an opaque origin, say): the caller falls back
  } finally {
    clearTimeout(timer);
  }
}

// The same semantics within one process: waiters queue per (adapter, key).
function requestLocalLock(scope, key, timeoutMs) {
  let byKey = localLocks.get(scope);
  if (!byKey) localLocks.set(scope, (byKey = new Map()));
  const queue = byKey.get(key) ?? [];
  byKey.set(key, queue);
  return new Promise((resolve) => {
    const waiter = { grant: null, timer: null };
    const release = () => {
      queue.shift();
      if (queue.length === 0) byKey.delete(key);
      else queue[0].grant();
    };
    waiter.grant = () => {
      clearTimeout(waiter.timer);
      resolve(release);
    };
    queue.push(waiter);
    if (queue.length === 1) return waiter.grant();
    waiter.timer = setTimeout(() => {
      queue.splice(queue.indexOf(waiter), 1);
      resolve(null);
    }, timeoutMs);
  });
}

/**
 * Takes the lock of checkpoint `key` (stored in `storage`), waiting at most
 * `timeoutMs`. Resolves to a release function, or null when another holder
 * kept it that long.
 */
export async function acquireCheckpointLock(storage, key, timeoutMs) {
  const locks = webLocks();
  if (locks) {
    try {
      return await requestWebLock(locks, LOCK_PREFIX + key, timeoutMs);
    } catch {
      // navigator.locks exists but refuses this document: the in-process lock still keeps its own StateSyncs apart
    }
  }
  return requestLocalLock(storage, key, timeoutMs);
}
