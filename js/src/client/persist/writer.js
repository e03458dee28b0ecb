// Writes checkpoints to a storage adapter off the hot path (issue 16): the
// StateSync offers a view of what changed after each feed()/edit()/end() call
// (O(1): references to immutable data), and the writing (serialization, digest,
// storage.set) happens here, asynchronously, one write at a time. While a
// write is in flight, a newer view replaces the queued one (coalescing): slow
// storage never makes writes pile up, and storage only ever receives
// checkpoints in the order they were taken.
import { checkpointBody, sealCheckpoint } from './checkpoint.js';

// A failed write is tried again after these delays (the last one repeats)
// unless a newer checkpoint comes first: storage that fails now and then still
// ends with the newest checkpoint, and storage that is gone costs one attempt
// every few seconds (the state's serialization is reused, only the digest and
// the write are repeated).
const RETRY_DELAYS_MS = [50, 250, 1000, 5000];

export class CheckpointWriter {
  #storage;
  #stats; // shared with the persistence info: writes, coalesced, failures, storageError
  #queued = null; // the newest view not yet written
  #running = null; // the pump's promise while it runs
  #retry = null; // the timer of a failed write's next attempt
  #failures = 0; // consecutive failed writes (the retry delay grows with them)
  #behind = false; // storage does not hold the newest view yet
  #stopped = false;
  #stateCache = { state: undefined, text: '' }; // the last state serialized: reused while the object is the same

  constructor(storage, stats) {
    this.#storage = storage;
    this.#stats = stats;
  }

  /** True while storage does not hold the newest checkpoint (queued, in flight, failed and waiting to retry, or dropped by stop()). */
  get behind() {
    return this.#behind;
  }

  /** A new checkpoint to write: replaces any queued one. Never blocks, never throws. */
  offer(view) {
    if (this.#stopped) return;
    this.#cancelRetry();
    if (this.#queued !== null) this.#stats.coalesced++;
    this.#queued = view;
    this.#behind = true;
    if (this.#running === null) this.#running = this.#pump();
  }

  /** Resolves once nothing is being written: the newest view is stored, or its last attempt failed (a retry may follow). */
  flush() {
    return this.#running ?? Promise.resolve();
  }

  /** No more writes: the queued view and any retry are dropped. Resolves when the write in flight (if any) has ended. */
  stop() {
    this.#stopped = true;
    this.#queued = null;
    this.#cancelRetry();
    return this.flush();
  }

  async #pump() {
    await null; // the write starts after the call that offered it has returned
    while (this.#queued !== null && !this.#stopped) {
      const view = this.#queued;
      this.#queued = null;
      if (await this.#write(view)) {
        this.#failures = 0;
        if (this.#queued === null) this.#behind = false;
      } else if (this.#queued === null && !this.#stopped) {
        this.#scheduleRetry(view);
      }
    }
    this.#running = null;
  }

  #scheduleRetry(view) {
    const delay = RETRY_DELAYS_MS[Math.min(this.#failures++, RETRY_DELAYS_MS.length - 1)];
    this.#retry = setTimeout(() => {
      this.#retry = null;
      this.offer(view);
    }, delay);
    if (typeof this.#retry === 'object' && typeof this.#retry.unref === 'function') this.#retry.unref();
  }

  #cancelRetry() {
    if (this.#retry === null) return;
    clearTimeout(this.#retry);
    this.#retry = null;
  }

  // One write; false if it failed (the error is kept in stats.storageError).
  async #write(view) {
    try {
      if (this.#stateCache.state !== view.state) this.#stateCache = { state: view.state, text: JSON.stringify(view.state) };
      const text = await sealCheckpoint(checkpointBody(view, this.#stateCache.text));
      if (this.#stopped) return true; // stopped while digesting: nothing more reaches storage
      await this.#storage.set(view.key, text);
      this.#stats.writes++;
      return true;
    } catch (error) {
      this.#stats.failures++;
      this.#stats.storageError = error;
      return false;
    }
  }
}
