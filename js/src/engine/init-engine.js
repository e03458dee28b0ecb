// initEngine() and the synchronous access to a loaded engine that
// canonicalJson / stateDigest / verifyApproval / renderStateForPrompt need. Any
// engine will do: the receiver (initEngine, createStateSync) and the sender
// (createStateEmitter) both carry the core's canonicalize / verify / renderPrompt.
import { EngineLink } from './engine-link.js';
import { syncError } from './errors.js';
import { loadEngine, readyEngine } from './loader.js';
import { engineOptions } from './options.js';

/**
 * Loads the receiver engine (once; the same instance createStateSync uses).
 * Idempotent. Options: wasmBinary, locateFile (as for createStateSync).
 */
export async function initEngine(options) {
  EngineLink.assertUsable(await loadEngine(engineOptions(options)));
}

/**
 * An engine-wide EngineLink to a loaded, healthy engine (a trap or abort in a
 * call through it kills that engine, as in StateSync), or the 'not-loaded' error.
 */
export function loadedEngineLink() {
  const engine = readyEngine();
  if (!engine) throw syncError('not-loaded', 'call await initEngine() (or create a StateSync/StateEmitter) first');
  return EngineLink.forEngine(engine);
}
