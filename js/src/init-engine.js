// initEngine() and the synchronous access to a loaded engine that
// canonicalJson / stateDigest / verifyApproval need. Any engine will do: the
// receiver (initEngine, createStateSync) and the sender (createStateEmitter)
// both carry the core's canonicalize / verify.
import { asCause, describeThrown, syncError, syncTypeError } from './errors.js';
import { loadEngine, readyEngine } from './loader.js';

export const NOT_LOADED_MESSAGE = 'agui-state-sync: call await initEngine() (or create a StateSync/StateEmitter) first';

/**
 * Loads the receiver engine (once; the same instance createStateSync uses).
 * Idempotent. Options: wasmBinary, locateFile (as for createStateSync).
 */
export async function initEngine(options) {
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
    throw syncTypeError('initEngine() options must be an object');
  }
  const { wasmBinary, locateFile, ...rest } = options ?? {};
  const unknown = Object.keys(rest);
  if (unknown.length) throw syncTypeError(`unknown initEngine() option ${JSON.stringify(unknown[0])}`);
  const engine = await loadEngine({ wasmBinary, locateFile });
  if (engine.failure) throw syncError(`the WebAssembly engine is unusable: ${engine.failure.message}`, engine.failure);
}

/** A loaded, healthy engine, or the "call initEngine() first" Error. */
export function requireEngine() {
  const engine = readyEngine();
  if (!engine) throw new Error(NOT_LOADED_MESSAGE);
  return engine;
}

// One call into an engine; a trap or abort kills that engine (as in StateSync).
export function callEngine(engine, fn) {
  try {
    return fn();
  } catch (thrown) {
    const error = syncError(`the WebAssembly engine failed (${describeThrown(thrown)})`, asCause(thrown));
    engine.poison(error);
    throw error;
  }
}
