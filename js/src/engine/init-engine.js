// initEngine() and the synchronous access to a loaded engine that
// canonicalJson / stateDigest / verifyApproval need. Any engine will do: the
// receiver (initEngine, createStateSync) and the sender (createStateEmitter)
// both carry the core's canonicalize / verify. What only a server calls
// (renderStateForPrompt, effectKey) is in the sender alone, so that browsers
// never download it: serverEngineLink().
import { EngineLink } from './engine-link.js';
import { syncError } from './errors.js';
import { loadEngine, readyEngine, readyEngineWith } from './loader.js';
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

/**
 * An engine-wide EngineLink to a loaded sender engine (the one that exports
 * `name`), or the 'not-loaded' error telling `who` how to load it.
 */
export function serverEngineLink(name, who) {
  const engine = readyEngineWith(name);
  if (!engine) throw syncError('not-loaded', `${who} needs the server engine: call await initServerEngine() (or create a StateEmitter) first`);
  return EngineLink.forEngine(engine);
}
