// The options every engine-backed log function takes: the StateSync limits
// and the wasm location, passed on to createStateSync (which checks values).
import { syncTypeError } from '../engine/errors.js';

const LOG_OPTIONS = new Set(['reorderWindow', 'reorderBytes', 'maxGapEvents', 'maxEventBytes', 'maxDepth', 'maxStateBytes', 'wasmBinary', 'locateFile']);

/** `options` checked for unknown keys (a TypeError 'invalid-options'); {} for undefined. */
export function logOptions(options) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) throw syncTypeError('invalid-options', 'options must be an object');
  for (const key of Object.keys(options)) {
    if (!LOG_OPTIONS.has(key)) throw syncTypeError('invalid-options', `unknown option ${JSON.stringify(key)}`);
  }
  return options;
}
