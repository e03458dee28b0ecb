// The one way into a loaded WebAssembly engine. An EngineLink is either
//  - an owner's link (EngineLink.create): a StateSync's or a StateEmitter's
//    C++ facade, created, called and freed through it; or
//  - an engine-wide link (EngineLink.forEngine): the module's own functions
//    (canonicalize, verify) for canonicalJson / stateDigest / verifyApproval.
// Anything a call throws (an abort's RuntimeError, a trap, a number from a
// stray C++ throw) becomes one AguiSyncError ('engine-failed'), makes the owner
// unusable and poisons the engine for every other owner; a failure another
// owner saw makes this one unusable at its next call.
import { asCause, describeThrown, failureError, syncError } from './errors.js';

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
  #owner; // 'StateSync' | 'StateEmitter' | null (engine-wide)
  #facade = null;
  #released = false;
  #broken = null; // the error that made the owner unusable

  /** @internal use EngineLink.create() or EngineLink.forEngine() */
  constructor(engine, owner, facade) {
    this.#engine = engine;
    this.#owner = owner;
    this.#facade = facade;
  }

  /**
   * Constructs `new engine[ctorName](optionsJson)` and checks its initResult():
   * the link of a new `owner` ('StateSync' | 'StateEmitter'). Throws
   * 'engine-failed' for an unusable engine, or the facade's failure code
   * ('invalid-options') for options the engine refuses.
   */
  static create(engine, ctorName, optionsJson, owner) {
    EngineLink.assertUsable(engine);
    const setup = EngineLink.forEngine(engine); // no owner yet: a failure names none
    const facade = setup.invoke((e) => new e[ctorName](optionsJson));
    const init = setup.callJson(() => facade.initResult());
    if (!init.ok) {
      facade.delete();
      throw failureError(init, 'invalid-options', `invalid options: ${init.message}`);
    }
    return new EngineLink(engine, owner, facade);
  }

  /** Throws 'engine-failed' if `engine` (just loaded) already failed. */
  static assertUsable(engine) {
    if (engine.failure) {
      throw syncError('engine-failed', `the WebAssembly engine is unusable: ${engine.failure.message}`, { cause: engine.failure });
    }
  }

  /** A link for the engine's module-level functions: invoke(fn) calls fn(engine). */
  static forEngine(engine) {
    return new EngineLink(engine, null, null);
  }

  /** The engine (shared with other owners). */
  get engine() {
    return this.#engine;
  }

  /** The owner's C++ facade (null once released, and for an engine-wide link). */
  get facade() {
    return this.#facade;
  }

  /** True once release() ran. */
  get released() {
    return this.#released;
  }

  /** True once this owner or its engine has failed. */
  get failed() {
    return Boolean(this.#broken || this.#engine.failure);
  }

  /** Throws 'disposed' after release(), 'engine-failed' if the owner or its engine failed. */
  check() {
    if (this.#released) throw syncError('disposed', `this ${this.#owner} was disposed`);
    const failure = this.#broken ?? this.#engine.failure;
    if (failure) {
      this.#broken = failure;
      throw syncError('engine-failed', `this ${this.#owner} is unusable after an engine failure: ${failure.message}`, { cause: failure });
    }
  }

  /** Runs one raw call into the engine: `fn(facade)`, or `fn(engine)` for an engine-wide link. */
  invoke(fn) {
    if (this.#released) throw syncError('disposed', `this ${this.#owner} was disposed`);
    try {
      return fn(this.#owner === null ? this.#engine : this.#facade);
    } catch (thrown) {
      const unusable = this.#owner === null ? '' : `; this ${this.#owner} is unusable, create a new one`;
      const error = syncError('engine-failed', `the WebAssembly engine failed (${describeThrown(thrown)})${unusable}`, {
        cause: asCause(thrown),
      });
      this.#broken = error;
      this.#engine.poison(error);
      throw error;
    }
  }

  /** invoke(fn) for a call that returns JSON text: the parsed value. */
  callJson(fn) {
    return this.parse(this.invoke(fn));
  }

  /** Parses JSON text the engine returned; malformed text makes the owner unusable ('engine-failed'). */
  parse(json) {
    try {
      return JSON.parse(json);
    } catch (thrown) {
      const error = syncError('engine-failed', `the engine returned malformed JSON (${describeThrown(thrown)})`, {
        cause: asCause(thrown),
      });
      this.#broken = error;
      throw error;
    }
  }

  /** Frees the facade if `owner` (the StateSync/StateEmitter object) is garbage-collected undisposed. */
  track(owner) {
    if (leakRegistry && this.#facade) leakRegistry.register(owner, { facade: this.#facade, engine: this.#engine }, owner);
  }

  /** For dispose(): stops tracking `owner` and frees the facade (a failed engine is left alone). Idempotent. */
  release(owner) {
    if (this.#released) return;
    this.#released = true;
    if (leakRegistry) leakRegistry.unregister(owner);
    const facade = this.#facade;
    this.#facade = null;
    if (!facade || this.failed) return;
    try {
      facade.delete();
    } catch {
      // the owner is going away either way
    }
  }
}
