// Errors as data. Every error this package throws is an AguiSyncError: its
// `code` is one of ERROR_CODES (codes.js, generated from the C++ table; the
// list is docs/codes.md), a patch refusal adds `opIndex`, an HTTP failure adds
// `status`. Code branches on `code`; `message` ("agui-state-sync: ...") is for
// humans only. Nothing else (no numbers, no strings, no embind BindingErrors)
// ever reaches the caller.

import { ERROR_CODES } from './codes.js';

export const PREFIX = 'agui-state-sync: ';

const KNOWN_ERROR_CODES = new Set(ERROR_CODES);

// Own properties of an AguiSyncError beyond message/cause.
function setFields(error, code, options) {
  error.code = code;
  if (options?.opIndex !== undefined) error.opIndex = options.opIndex;
  if (options?.status !== undefined) error.status = options.status;
}

function errorOptions(options) {
  return options?.cause === undefined ? undefined : { cause: options.cause };
}

/**
 * The package's error: `code` (ERROR_CODES), `opIndex` (a refused patch's
 * operation), `status` (an HTTP error). `name` stays 'Error' (and 'TypeError'
 * for argument errors) on purpose, so String(error) and logs read as before;
 * recognise it with `instanceof AguiSyncError` and branch on `code`.
 */
export class AguiSyncError extends Error {
  constructor(code, message, options) {
    super(message, errorOptions(options));
    setFields(this, code, options);
  }

  // Argument and option errors have always been TypeErrors (callers test
  // `instanceof TypeError`), and a class has one prototype chain: they are
  // AguiSyncTypeError, a TypeError subclass, which this makes count as
  // AguiSyncError too. Subclasses of AguiSyncError keep the ordinary check.
  static [Symbol.hasInstance](value) {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    return this === AguiSyncError && value instanceof AguiSyncTypeError;
  }
}

/** A TypeError that is also an AguiSyncError (see AguiSyncError[Symbol.hasInstance]). */
class AguiSyncTypeError extends TypeError {
  constructor(code, message, options) {
    super(message, errorOptions(options));
    setFields(this, code, options);
  }
}

/** An AguiSyncError with `code`; options: { cause, opIndex, status }. */
export function syncError(code, message, options) {
  return new AguiSyncError(code, PREFIX + message, options);
}

/** An AguiSyncError that is also a TypeError: a wrong argument ('invalid-argument') or option ('invalid-options'). */
export function syncTypeError(code, message) {
  return new AguiSyncTypeError(code, PREFIX + message);
}

/** A facade failure's code, or `fallback` if the engine reports one this version does not list. */
export function failureCode(failure, fallback) {
  return KNOWN_ERROR_CODES.has(failure.code) ? failure.code : fallback;
}

/** The error for a facade failure {ok:false, code, message, opIndex?} (code: failureCode()). */
export function failureError(failure, fallback, message) {
  return syncError(failureCode(failure, fallback), message, { opIndex: failure.opIndex });
}

// A short description of whatever a failed WebAssembly call threw (a
// RuntimeError from abort(), a bare number from a C++ throw, ...).
export function describeThrown(thrown) {
  if (thrown instanceof Error) return thrown.message || thrown.name;
  if (typeof thrown === 'number') return `C++ exception object at 0x${thrown.toString(16)}`;
  try {
    return String(thrown);
  } catch {
    return 'unknown failure';
  }
}

// The value to use as an Error's `cause`: Errors as they are, anything else boxed.
export function asCause(thrown) {
  return thrown instanceof Error ? thrown : new Error(describeThrown(thrown));
}

// A listener (subscribe, guard.watch, onOutcome, ...) threw: report it the way
// the platform reports uncaught errors, never rethrow into the engine's caller.
export function reportListenerError(error, where = 'a listener') {
  if (typeof globalThis.reportError === 'function') {
    try {
      globalThis.reportError(error);
      return;
    } catch {
      // fall through to the console
    }
  }
  if (typeof console !== 'undefined') console.error(`agui-state-sync: ${where} threw`, error);
}
