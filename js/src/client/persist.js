// Checkpoints in the browser (issue 16, section 1): createStateSync({ persist:
// { key, storage? } }) restores the StateSync from its last checkpoint and
// keeps writing one after every feed()/edit()/end() call that changed what a
// checkpoint holds (confirmed state, lastSeq, epoch, lastEventId, pending
// edits). Pieces: persist/checkpoint.js (stored form, digest), writer.js
// (coalescing async writes), lock.js (one holder per key), options.js, and the
// adapters memory.js / indexeddb.js. This file puts them together.
import { failureError } from '../engine/errors.js';
import { kCheckpointMeta, kPersist, kRestore } from '../engine/internals.js';
import { canDigest, openCheckpoint, rebaseClient } from './persist/checkpoint.js';
import { hasIndexedDb, indexedDbStorage } from './persist/indexeddb.js';
import { acquireCheckpointLock } from './persist/lock.js';
import { CheckpointWriter } from './persist/writer.js';

export { memoryStorage } from './persist/memory.js';
export { indexedDbStorage } from './persist/indexeddb.js';

// One default adapter per realm: the in-process lock (no Web Locks) is per adapter.
let defaultStorage = null;

function storageFor(options) {
  if (options.storage !== null) return options.storage;
  if (!hasIndexedDb()) return null;
  defaultStorage ??= indexedDbStorage();
  return defaultStorage;
}

/**
 * What persistence did and does for one StateSync (sync.persistence gives a
 * copy): how the restore went, whether checkpoints are being written, and the
 * writer's counters.
 */
class PersistState {
  constructor(key) {
    this.key = key;
    this.restore = 'skipped'; // 'restored' | 'none' | 'discarded' | 'unreadable' | 'skipped'
    this.active = false;
    this.inactiveReason = null; // 'locked' | 'unsupported' | 'disposed' while not active
    this.error = null; // AguiSyncError: why a stored checkpoint was discarded
    this.outcomes = Object.freeze([]); // the restore's outcomes (the 'restored' resync, edit-rejected)
    this.stats = { writes: 0, coalesced: 0, failures: 0, storageError: null };
  }

  view() {
    const { key, restore, active, inactiveReason, error, outcomes, stats } = this;
    return { key, restore, active, inactiveReason, error, outcomes, ...stats };
  }
}

/**
 * The StateSync's side of persistence (installed with sync[kPersist]): it
 * hears every call that moved the checkpoint's content and hands the writer a
 * view of it. O(1) per call; the meta (clientId, editCounter) is re-read from
 * the engine only when the pending list changed.
 */
class PersistSink {
  #state;
  #writer; // null when persistence is off
  #release;
  #readMeta;
  #meta = null;
  #edits;
  #stopped = null; // stop()'s promise

  constructor(state, writer, release, readMeta) {
    this.#state = state;
    this.#writer = writer;
    this.#release = release;
    this.#readMeta = readMeta;
  }

  get info() {
    return { ...this.#state.view(), behind: this.#writer?.behind ?? false };
  }

  /** After a feed()/edit()/end() call that changed any of { state, lastSeq, epoch, lastEventId, edits }. */
  changed(view) {
    if (this.#writer === null || this.#stopped) return;
    if (this.#meta === null || view.edits !== this.#edits) {
      this.#edits = view.edits;
      this.#meta = this.#readMeta(); // an edit moved the counter
    }
    const { clientId, editCounter } = this.#meta;
    this.#writer.offer({ ...view, key: this.#state.key, clientId, editCounter });
  }

  flush() {
    return this.#stopped ?? this.#writer?.flush() ?? Promise.resolve();
  }

  /** dispose(): no more writes; the lock goes once the write in flight has ended. */
  stop() {
    if (this.#stopped) return this.#stopped;
    if (this.#state.active) {
      this.#state.active = false;
      this.#state.inactiveReason = 'disposed';
    }
    this.#stopped = (this.#writer ? this.#writer.stop() : Promise.resolve()).then(() => this.#release());
    return this.#stopped;
  }
}

// The checkpoint's body for this page: its new edits get this page's
// clientId (random per createStateSync unless the app passed one), and the
// restored edits keep their ids. Continuing the stored clientId's counter
// would be unsafe: an edit made after the last completed write may already
// have reached the agent, which would take the next edit with that number for
// it (the agent applies an editId once). With the same clientId (an explicit
// option), the stored counter continues, as the engine does.
function ownClient(sync, { body, checkpoint }) {
  const { clientId } = sync[kCheckpointMeta]();
  if (clientId === checkpoint.clientId) return body;
  return rebaseClient(body, checkpoint, clientId, 0);
}

// Reads, checks and restores the stored checkpoint. A bad one is deleted and
// reported (state.error); the StateSync then starts as if there was none.
async function restoreInto(sync, storage, state) {
  let stored;
  try {
    stored = await storage.get(state.key);
  } catch (error) {
    state.restore = 'unreadable';
    state.stats.storageError = error;
    return;
  }
  if (stored === undefined || stored === null) {
    state.restore = 'none';
    return;
  }
  const opened = await openCheckpoint(stored, state.key);
  const restored = opened.error ? null : sync[kRestore](ownClient(sync, opened), opened.checkpoint);
  if (restored && !restored.failure) {
    state.restore = 'restored';
    state.outcomes = Object.freeze(restored.outcomes);
    return;
  }
  state.restore = 'discarded';
  state.error = opened.error
    ?? failureError(restored.failure, 'invalid-checkpoint', `the stored checkpoint was discarded: the engine refused it (${restored.failure.message})`);
  try {
    await storage.delete(state.key);
  } catch (error) {
    state.stats.storageError = error; // the next write replaces it anyway
  }
}

/**
 * Restores `sync` from the checkpoint under options.key and starts writing
 * checkpoints (createStateSync, before it returns the StateSync). Persistence
 * stays off, and sync.persistence says why, when another holder keeps the
 * key's lock ('locked') or this environment has no crypto.subtle or default
 * storage ('unsupported').
 */
export async function attachPersistence(sync, options) {
  const state = new PersistState(options.key);
  const storage = storageFor(options);
  const readMeta = () => sync[kCheckpointMeta]();
  const off = (reason) => {
    state.inactiveReason = reason;
    sync[kPersist](new PersistSink(state, null, () => {}, readMeta));
  };
  if (storage === null || !canDigest()) return off('unsupported');
  const release = options.lock ? await acquireCheckpointLock(storage, options.key, options.lockTimeoutMs) : () => {};
  if (release === null) return off('locked');
  try {
    await restoreInto(sync, storage, state);
  } catch (error) {
    release(); // the engine failed: createStateSync disposes the StateSync and rethrows
    throw error;
  }
  state.active = true;
  const sink = new PersistSink(state, new CheckpointWriter(storage, state.stats), release, readMeta);
  // A stored edit the ownership rules now refuse was dropped: the checkpoint says so at once.
  sync[kPersist](sink, state.outcomes.some((outcome) => outcome.kind === 'edit-rejected'));
}
