// createStateEmitter() options: checked here (a TypeError with code
// 'invalid-options' for a wrong one), then passed to the EmitterFacade as JSON
// (src/facade/emitter_facade.h).
import { jsonText, optionsObject, WASM_OPTIONS } from '../engine/options.js';
import { syncTypeError } from '../engine/errors.js';

// createStateEmitter: integers >= 0 passed as they are.
const EMITTER_COUNT_OPTIONS = ['startSeq', 'digestEvery', 'replayMaxEvents', 'replayMaxBytes', 'editHistory', 'ackHistory'];
const EMITTER_OPTIONS = new Set([
  ...EMITTER_COUNT_OPTIONS, 'epoch', 'snapshotRatio', 'guardedPaths', 'testAll', 'maxDepth', 'initialState',
  'maxActivities', ...WASM_OPTIONS,
]);
// The options an emitter's activities (emitter.activities) take from it.
const ACTIVITY_OPTIONS = ['digestEvery', 'replayMaxEvents', 'replayMaxBytes', 'maxDepth', 'snapshotRatio'];

/** A fresh random epoch: crypto.randomUUID() where available. */
export function randomEpoch() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID();
  const bytes = new Uint8Array(16);
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(bytes);
  else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

// The EmitterFacade's numeric options.
function emitterNumbers(options, out) {
  for (const name of EMITTER_COUNT_OPTIONS) {
    const value = options[name];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 0) throw syncTypeError('invalid-options', `option ${name} must be an integer >= 0`);
    out[name] = value;
  }
  if (options.maxDepth !== undefined) {
    if (!Number.isSafeInteger(options.maxDepth) || options.maxDepth <= 0) {
      throw syncTypeError('invalid-options', 'option maxDepth must be a positive integer');
    }
    out.maxDepth = options.maxDepth;
  }
  if (options.snapshotRatio !== undefined) {
    if (typeof options.snapshotRatio !== 'number' || !Number.isFinite(options.snapshotRatio)) {
      throw syncTypeError('invalid-options', 'option snapshotRatio must be a finite number');
    }
    out.snapshotRatio = options.snapshotRatio;
  }
}

/** createStateEmitter() options: the EmitterFacade's options JSON (epoch defaults to a fresh random id). */
export function emitterOptions(options) {
  const checked = optionsObject(options, EMITTER_OPTIONS);
  const out = {};
  emitterNumbers(checked, out);
  const epoch = checked.epoch ?? randomEpoch();
  if (typeof epoch !== 'string') throw syncTypeError('invalid-options', 'option epoch must be a string');
  out.epoch = epoch;
  if (checked.testAll !== undefined) {
    if (typeof checked.testAll !== 'boolean') throw syncTypeError('invalid-options', 'option testAll must be a boolean');
    out.testAll = checked.testAll;
  }
  if (checked.guardedPaths !== undefined) {
    const paths = checked.guardedPaths;
    if (!Array.isArray(paths) || !paths.every((p) => typeof p === 'string')) {
      throw syncTypeError('invalid-options', 'option guardedPaths must be an array of JSON Pointer strings');
    }
    out.guardedPaths = paths;
  }
  if (checked.initialState !== undefined) {
    out.initialState = JSON.parse(jsonText(checked.initialState, 'initialState', 'invalid-options'));
  }
  maxActivities(checked);
  return JSON.stringify(out);
}

function maxActivities(options) {
  const value = options.maxActivities;
  if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0)) {
    throw syncTypeError('invalid-options', 'option maxActivities must be a positive integer');
  }
  return value;
}

/**
 * The ActivityFacade's options for an emitter created with `options` (checked
 * by emitterOptions): its digest, replay and depth options and maxActivities.
 * The caller adds the epoch: a plain emitter's own (its activities live and die
 * with it), a store-bound one's a fresh one (activities are never stored, so
 * they are this process's line even where the state continues another's).
 */
export function activityOptions(options) {
  const picked = {};
  for (const name of ACTIVITY_OPTIONS) if (options?.[name] !== undefined) picked[name] = options[name];
  const out = {};
  emitterNumbers(picked, out);
  const max = maxActivities(options ?? {});
  if (max !== undefined) out.maxActivities = max;
  return out;
}
