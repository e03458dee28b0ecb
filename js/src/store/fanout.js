// The listeners of a store-bound emitter (DurableStateEmitter.subscribe) and
// the poll that finds other instances' writes while anyone listens.
import { reportListenerError, syncTypeError } from '../errors.js';

export class Fanout {
  #listeners = new Set();
  #timer = null;

  /** Adds listener(events); poll() runs every pollMs while any listener is left. Returns the remover. */
  add(listener, pollMs, poll) {
    if (typeof listener !== 'function') throw syncTypeError('invalid-argument', 'subscribe() needs a function');
    if (!(pollMs > 0)) throw syncTypeError('invalid-argument', 'subscribe() pollMs must be a positive number');
    this.#listeners.add(listener);
    this.#timer ??= setInterval(poll, pollMs);
    this.#timer.unref?.(); // never keeps a process alive by itself
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
    this.#listeners.clear();
  }
}
