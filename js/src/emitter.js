// StateEmitter: the sender half (src/state_emitter.h) for Node servers (or any
// JS host). It owns one C++ EmitterFacade in the agui_emitter module: the app
// hands it whole new states (diffed in C++) or its own RFC 6902 ops, and gets
// back sequenced, digest-stamped @ag-ui/core events, SSE-encoded on request,
// plus a replay buffer for clients that missed some (server.js: catchUp).
import { encodeOptions, jsonText } from './emitter-options.js';
import { EngineLink } from './engine-link.js';
import { asCause, describeThrown, syncError, syncTypeError } from './errors.js';
import { kCatchUpSnapshot, kInternals } from './internals.js';
import { loadModule } from './loader.js';

// The sender's WebAssembly module; its glue is imported on first use only.
const EMITTER_MODULE = {
  wasmFile: 'agui_emitter.wasm',
  factory: async () => (await import('../wasm/agui_emitter.mjs')).default,
};

const EMITTER_DISPOSED = 'agui-state-sync: this StateEmitter was disposed';

// An Error for a refused update/patch: message plus code (and opIndex for a patch).
function refusal(what, result) {
  const match = /^([a-z][a-z-]*): (.*)$/s.exec(result.error);
  const code = result.code ?? (match ? match[1] : /deeper/.test(result.error) ? 'limit-exceeded' : 'invalid-json');
  const message = match && !result.code ? match[2] : result.error;
  const error = syncError(`${what} refused (${code}): ${message}; the state is unchanged`);
  error.code = code;
  if (result.opIndex !== undefined) error.opIndex = result.opIndex;
  return error;
}

export class StateEmitter {
  #engine;
  #facade;
  #epoch;
  #state = undefined; // parsed on demand, until the next change
  #stateValid = false;
  #disposed = false;
  #link;

  /** @internal use createStateEmitter() */
  constructor(engine, facade) {
    this.#engine = engine;
    this.#link = new EngineLink(engine, 'StateEmitter');
    this.#facade = facade;
    this.#epoch = this.#call(() => facade.epoch());
    this.#link.track(this, facade);
  }

  /**
   * Diffs the current state against `newState` and returns the events to send
   * (one STATE_DELTA, or a STATE_SNAPSHOT when that is smaller; [] when nothing
   * changed). Throws an Error with `code` if the state cannot be sent (e.g.
   * 'limit-exceeded' for nesting deeper than maxDepth); the state is then unchanged.
   */
  update(newState) {
    this.#check();
    const text = jsonText(newState, 'update() state');
    const result = this.#run((f) => f.update(text));
    if (!result.ok) throw refusal('update()', result);
    if (result.events.length) this.#stateValid = false;
    return result.events;
  }

  /**
   * Applies the app's RFC 6902 operations atomically and returns the events
   * that carry exactly them. Throws an Error with `code` ('invalid-patch',
   * 'patch-failed', 'precondition-failed', 'limit-exceeded') and `opIndex` if
   * the patch does not apply; the state is then unchanged.
   */
  patch(ops) {
    this.#check();
    const text = jsonText(ops, 'patch() operations');
    const result = this.#run((f) => f.patch(text));
    if (!result.ok) throw refusal('patch()', result);
    if (result.events.length) this.#stateValid = false;
    return result.events;
  }

  /** A STATE_SNAPSHOT of the current state at the current seq (digest-stamped). */
  snapshot() {
    this.#check();
    return this.#run((f) => f.snapshot());
  }

  /**
   * What a client at `seq` needs to be current: [] when it is, the missed
   * deltas exactly as first sent, or one snapshot (too old, future seq, replay
   * costlier than a snapshot, or `epoch` given and not ours; '' is an epoch
   * like any other). `held`: seqs the client already holds (resync.held); a
   * replay leaves those out, except the first missed delta.
   */
  replaySince(seq, epoch, held) {
    this.#check();
    if (!Number.isSafeInteger(seq) || seq < 0) throw syncTypeError('replaySince() seq must be an integer >= 0');
    if (epoch !== undefined && epoch !== null && typeof epoch !== 'string') {
      throw syncTypeError('replaySince() epoch must be a string');
    }
    const skip = held ?? [];
    if (!Array.isArray(skip) || !skip.every((s) => Number.isSafeInteger(s) && s >= 0)) {
      throw syncTypeError('replaySince() held must be an array of integers >= 0');
    }
    return this.#replay(JSON.stringify({ seq, epoch: epoch ?? null, skip }), 'replaySince()');
  }

  /** "id: <metadata.seq>\ndata: <JSON>\n\n" (no id line when `id` is false or the event has no seq). */
  encode(event, { id = true } = {}) {
    const data = jsonText(event, 'encode() event');
    const seq = event?.metadata?.seq;
    const idLine = id && Number.isSafeInteger(seq) && seq >= 0 ? `id: ${seq}\n` : '';
    return `${idLine}data: ${data}\n\n`;
  }

  /** The SSE heartbeat comment ": hb <seq>\n\n". */
  heartbeat() {
    this.#check();
    const facade = this.#facade;
    return this.#call(() => facade.heartbeat());
  }

  /** The seq of the current state. */
  get seq() {
    this.#check();
    const facade = this.#facade;
    return this.#call(() => facade.seq());
  }

  /** The epoch stamped on every event (options.epoch, or a random id). */
  get epoch() {
    this.#check();
    return this.#epoch;
  }

  /** The current state (as receivers reconstruct it), parsed once per change. Treat it as read-only. */
  get state() {
    this.#check();
    if (!this.#stateValid) {
      this.#state = this.#run((f) => f.stateJson());
      this.#stateValid = true;
    }
    return this.#state;
  }

  /** @internal snapshot() as a catch-up's answer, counted in stats().replaySnapshots (used by catchUp()). */
  [kCatchUpSnapshot]() {
    this.#check();
    return this.#replay('{"snapshot":true}', 'catchUp()')[0];
  }

  /** Counters: deltas, snapshots, digests, repaired, rejected, replays, replaySnapshots. */
  stats() {
    this.#check();
    return this.#run((f) => f.statsJson());
  }

  /** Frees the engine object. Idempotent; any other call afterwards throws. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    const facade = this.#facade;
    this.#facade = null;
    this.#state = undefined;
    this.#link.release(this, facade);
  }

  /** @internal test hooks (not part of the public API) */
  [kInternals]() {
    return { engine: this.#engine, facade: this.#facade };
  }

  #check() {
    if (this.#disposed) throw new Error(EMITTER_DISPOSED);
    this.#link.check();
  }

  #call(fn) {
    return this.#link.call(fn);
  }

  // A facade call returning JSON, parsed.
  #run(fn) {
    const facade = this.#facade;
    return JSON.parse(this.#call(() => fn(facade)));
  }

  // The facade's replay(requestJson): the events, or `caller` failed.
  #replay(requestJson, caller) {
    const result = this.#run((f) => f.replay(requestJson));
    if (result.error !== undefined) throw syncError(`${caller} failed: ${result.error}`);
    return result.events;
  }
}

/**
 * Loads the sender engine (once) and creates a StateEmitter. That engine also
 * serves canonicalJson / stateDigest / verifyApproval (an agent needs the last).
 * @param {object} [options] startSeq, epoch, digestEvery, guardedPaths, testAll,
 *   snapshotRatio, replayMaxEvents, replayMaxBytes, maxDepth, initialState,
 *   wasmBinary, locateFile (of the emitter module)
 */
export async function createStateEmitter(options) {
  const optionsJson = encodeOptions(options);
  const engine = await loadModule(EMITTER_MODULE, options ?? {});
  if (engine.failure) throw syncError(`the WebAssembly engine is unusable: ${engine.failure.message}`, engine.failure);
  let facade;
  let problem;
  try {
    facade = new engine.EmitterFacade(optionsJson);
    problem = facade.initError();
  } catch (thrown) {
    const error = syncError(`the WebAssembly engine failed (${describeThrown(thrown)})`, asCause(thrown));
    engine.poison(error);
    throw error;
  }
  if (problem) {
    facade.delete();
    throw syncError(`invalid options: ${problem}`);
  }
  return new StateEmitter(engine, facade);
}
