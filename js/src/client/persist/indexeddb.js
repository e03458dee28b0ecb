// The browsers' default checkpoint storage: one IndexedDB object store, a
// checkpoint's text per key. Each call is its own transaction, and a put is
// atomic: a tab closed mid-write leaves the previous checkpoint, never half of one.
import { syncError } from '../../engine/errors.js';

const DEFAULT_DATABASE = 'agui-state-sync';
const STORE = 'checkpoints';

/** True when this realm has IndexedDB. */
export function hasIndexedDb() {
  return typeof globalThis.indexedDB?.open === 'function';
}

function requestResult(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

// Opens (creating on first use) the database with its one object store.
function openDatabase(name) {
  const request = globalThis.indexedDB.open(name, 1);
  request.onupgradeneeded = () => request.result.createObjectStore(STORE);
  // Another tab upgrading the database would wait for us forever: give way.
  return requestResult(request).then((db) => {
    db.onversionchange = () => db.close();
    return db;
  });
}

/**
 * { get, set, delete } over IndexedDB database `database` (default
 * 'agui-state-sync'), object store 'checkpoints'. The database opens on first use.
 */
export function indexedDbStorage({ database = DEFAULT_DATABASE } = {}) {
  if (!hasIndexedDb()) throw syncError('invalid-options', 'indexedDbStorage(): no IndexedDB in this environment');
  let opened = null;
  const db = () => {
    opened ??= openDatabase(database).catch((error) => {
      opened = null; // a later call tries again
      throw error;
    });
    return opened;
  };
  // One transaction: resolves with the request's result once the transaction has committed.
  async function run(mode, act) {
    let connection = await db();
    let tx;
    try {
      tx = connection.transaction(STORE, mode);
    } catch (error) {
      if (error?.name !== 'InvalidStateError') throw error;
      opened = null; // closed under us (a version change): reopen once
      connection = await db();
      tx = connection.transaction(STORE, mode);
    }
    const request = act(tx.objectStore(STORE));
    return new Promise((resolve, reject) => {
      tx.oncomplete = () => resolve(request.result);
      tx.onerror = () => reject(tx.error ?? request.error);
      tx.onabort = () => reject(tx.error ?? new Error('the IndexedDB transaction was aborted'));
    });
  }
  return {
    get: (key) => run('readonly', (store) => store.get(key)),
    set: (key, value) => run('readwrite', (store) => store.put(value, key)).then(() => undefined),
    delete: (key) => run('readwrite', (store) => store.delete(key)).then(() => undefined),
  };
}
