// createStateEmitter() options: checked here, then passed to the C++
// EmitterFacade as JSON (src/emitter_facade.h).
import { describeThrown, syncTypeError } from './errors.js';

const NUMBER_OPTIONS = ['startSeq', 'digestEvery', 'replayMaxEvents', 'replayMaxBytes'];
const KNOWN_OPTIONS = new Set([
  ...NUMBER_OPTIONS, 'epoch', 'snapshotRatio', 'guardedPaths', 'testAll', 'maxDepth', 'initialState',
  'wasmBinary', 'locateFile',
]);

/** A fresh random epoch: crypto.randomUUID() where available. */
function randomEpoch() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID();
  const bytes = new Uint8Array(16);
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** JSON text of `value`, or a TypeError naming `what`. */
export function jsonText(value, what) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (thrown) {
    throw syncTypeError(`${what} must be JSON-serializable (${describeThrown(thrown)})`);
  }
  if (text === undefined) throw syncTypeError(`${what} must be JSON-serializable, got ${typeof value}`);
  return text;
}

/** The options JSON for EmitterFacade (epoch defaults to a fresh random id). */
export function encodeOptions(options) {
  if (options === undefined || options === null) options = {};
  if (typeof options !== 'object' || Array.isArray(options)) throw syncTypeError('options must be an object');
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) throw syncTypeError(`unknown option ${JSON.stringify(key)}`);
  }
  const out = {};
  for (const name of NUMBER_OPTIONS) {
    const value = options[name];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 0) throw syncTypeError(`option ${name} must be an integer >= 0`);
    out[name] = value;
  }
  if (options.maxDepth !== undefined) {
    if (!Number.isSafeInteger(options.maxDepth) || options.maxDepth <= 0) throw syncTypeError('option maxDepth must be a positive integer');
    out.maxDepth = options.maxDepth;
  }
  if (options.snapshotRatio !== undefined) {
    if (typeof options.snapshotRatio !== 'number' || !Number.isFinite(options.snapshotRatio)) {
      throw syncTypeError('option snapshotRatio must be a finite number');
    }
    out.snapshotRatio = options.snapshotRatio;
  }
  const epoch = options.epoch ?? randomEpoch();
  if (typeof epoch !== 'string') throw syncTypeError('option epoch must be a string');
  out.epoch = epoch;
  if (options.testAll !== undefined) {
    if (typeof options.testAll !== 'boolean') throw syncTypeError('option testAll must be a boolean');
    out.testAll = options.testAll;
  }
  if (options.guardedPaths !== undefined) {
    const paths = options.guardedPaths;
    if (!Array.isArray(paths) || !paths.every((p) => typeof p === 'string')) {
      throw syncTypeError('option guardedPaths must be an array of JSON Pointer strings');
    }
    out.guardedPaths = paths;
  }
  if (options.initialState !== undefined) out.initialState = JSON.parse(jsonText(options.initialState, 'initialState'));
  return JSON.stringify(out);
}
