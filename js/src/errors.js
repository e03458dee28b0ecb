// Every error this package throws is a JS Error whose message starts with
// "agui-state-sync:". Nothing else (no numbers, no strings, no embind
// BindingErrors) ever reaches the caller.

export const PREFIX = 'agui-state-sync: ';

export const DISPOSED_MESSAGE = 'agui-state-sync: this StateSync was disposed';

export function syncError(message, cause) {
  return cause === undefined ? new Error(PREFIX + message) : new Error(PREFIX + message, { cause });
}

export function syncTypeError(message) {
  return new TypeError(PREFIX + message);
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
