// One owner's (a StateSync's or a StateEmitter's) link to a shared WebAssembly
// engine. Anything a call throws (an abort's RuntimeError, a trap, a number
// from a stray C++ throw) becomes one clear Error, makes this owner unusable
// and poisons the engine for every other owner; a failure another owner saw
// makes this one unusable at its next call.
import { asCause, describeThrown, syncError } from './errors.js';

// Frees the C++ object of an owner that was garbage-collected undisposed.
const leakRegistry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(({ facade, engine }) => {
    if (engine.failure) return;
    try {
      facade.delete();
    } catch {
      // nothing sensible to do in a finalizer
    }
  })
  : null;

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

  /** Frees `facade` if `owner` is garbage-collected without being disposed. */
  track(owner, facade) {
    if (leakRegistry) leakRegistry.register(owner, { facade, engine: this.#engine }, owner);
  }

  /** For dispose(): stops tracking `owner` and frees its facade (a failed engine is left alone). */
  release(owner, facade) {
    if (leakRegistry) leakRegistry.unregister(owner);
    if (!facade || this.failed) return;
    try {
      facade.delete();
    } catch {
      // the owner is going away either way
    }
  }
}
