// Options every entry point shares: the wasm options (handled by loader.js, not
// the facades), the object check, JSON text with a clear error, and
// initEngine()'s own options. createStateSync's are in client/sync-options.js,
// createStateEmitter's in server/emitter-options.js; the engine checks them
// again and may still refuse (initResult(); engine-link.js).
import { describeThrown, syncTypeError } from './errors.js';

/** The wasm options every entry point takes. */
export const WASM_OPTIONS = ['wasmBinary', 'locateFile'];

/** A value as it reads in an error message. */
export function describeValue(value) {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  return String(value);
}

/** JSON text of `value`, or a TypeError (`code`, default 'invalid-argument') naming `what`. */
export function jsonText(value, what, code = 'invalid-argument') {
  let text;
  try {
    text = JSON.stringify(value);
  } catch (thrown) {
    throw syncTypeError(code, `${what} must be JSON-serializable (${describeThrown(thrown)})`);
  }
  if (text === undefined) throw syncTypeError(code, `${what} must be JSON-serializable, got ${typeof value}`);
  return text;
}

// `options` as an object ({} for undefined/null); throws for a non-object or an unknown key.
export function optionsObject(options, known) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) throw syncTypeError('invalid-options', 'options must be an object');
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw syncTypeError('invalid-options', `unknown option ${JSON.stringify(key)}`);
  }
  return options;
}

/** initEngine() options: { wasmBinary, locateFile } (their types are checked by the loader). */
export function engineOptions(options) {
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
    throw syncTypeError('invalid-options', 'initEngine() options must be an object');
  }
  const { wasmBinary, locateFile, ...rest } = options ?? {};
  const unknown = Object.keys(rest);
  if (unknown.length) throw syncTypeError('invalid-options', `unknown initEngine() option ${JSON.stringify(unknown[0])}`);
  return { wasmBinary, locateFile };
}
