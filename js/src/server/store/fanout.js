// The listeners of a store-bound emitter (DurableStateEmitter.subscribe) and
// how other instances' writes are found while anyone listens: the store's
// notification when it has one (watch: Redis pub/sub, memoryStore's own),
// and a poll, every pollMs without one, as a slow safety net with one.
import { reportListenerError, syncTypeError } from '../../engine/errors.js';

const WATCHED_POLL_MS = 1000; // the safety-net poll when the store notifies

export class Fanout {
  #listeners = new Set();
  #timer = null;
  #unwatch = null;
  #running = null; // the poll under way
  #again = false; // a notification came during it: poll once more after

  /**
   * Adds listener(events); while any listener is left, poll() runs on every
   * notification of watch(onChange) -> unwatch (when given) and every pollMs
   * (at least WATCHED_POLL_MS with a watch). Returns the remover.
   */
  add(listener, pollMs, poll, watch = null) {
    if (typeof listener !== 'function') throw syncTypeError('invalid-argument', 'subscribe() needs a function');
    if (!(pollMs > 0)) throw syncTypeError('invalid-argument', 'subscribe() pollMs must be a positive number');
    this.#listeners.add(listener);
    if (this.#timer === null) {
      const kick = () => this.#kick(poll);
      this.#unwatch = watch ? watch(kick) : null;
      this.#timer = setInterval(kick, watch ? Math.max(pollMs, WATCHED_POLL_MS) : pollMs);
      this.#timer.unref?.(); // never keeps a process alive by itself
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.clear();
    };
  }

  /** Every listener gets `events` (a throwing one is reported, the others still get them). */
  publish(events) {
    if (events.length === 0) return;
    for (const listener of this.#listeners) {
      try {
        listener(events);
      } catch (error) {
        reportListenerError(error, 'a DurableStateEmitter listener');
      }
    }
  }

  clear() {
    clearInterval(this.#timer);
    this.#timer = null;
    this.#unwatch?.();
    this.#unwatch = null;
    this.#listeners.clear();
  }

  // One poll at a time; notifications during it make one more, not one each.
  #kick(poll) {
    if (this.#timer === null) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = Promise.resolve(poll()).catch(() => {}).finally(() => {
      this.#running = null;
      if (!this.#again) return;
      this.#again = false;
      this.#kick(poll);
    });
  }
}
