// One owner's (a StateSync's or a StateEmitter's) link to a shared WebAssembly
// engine. Anything a call throws (an abort's RuntimeError, a trap, a number
// from a stray C++ throw) becomes one clear Error, makes this owner unusable
// and poisons the engine for every other owner; a failure another owner saw
// makes this one unusable at its next call.
import { asCause, describeThrown, syncError } from './errors.js';

export class EngineLink {
  #engine;
  #owner;
  #broken = null; // the Error that made the owner unusable

  constructor(engine, owner) {
    this.#engine = engine;
    this.#owner = owner;
  }

  /** True once this owner or its engine has failed. */
  get failed() {
    return Boolean(this.#broken || this.#engine.failure);
  }

  /** Throws the owner's "unusable" Error if it or its engine failed. */
  check() {
    const failure = this.#broken ?? this.#engine.failure;
    if (failure) {
      this.#broken = failure;
      throw syncError(`this ${this.#owner} is unusable after an engine failure: ${failure.message}`, failure);
    }
  }

  /** Runs one call into the engine. */
  call(fn) {
    try {
      return fn();
    } catch (thrown) {
      const error = syncError(
        `the WebAssembly engine failed (${describeThrown(thrown)}); this ${this.#owner} is unusable, create a new one`,
        asCause(thrown),
      );
      this.#broken = error;
      this.#engine.poison(error);
      throw error;
    }
  }

  /** Makes only this owner unusable (the engine itself is fine). */
  breakOwner(error) {
    this.#broken = error;
  }
}
