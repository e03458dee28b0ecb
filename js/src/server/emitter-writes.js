// Helpers for code that writes through a StateEmitter of either kind: a plain
// one answers at once, a store-bound one (DurableStateEmitter) with promises.
// Used by the proxy (proxy/thread.js, relay.js) and sequenceState().

/** fn(value) now, or once `value` resolves when it is a promise (onError: its rejection). */
export function after(value, fn, onError) {
  return typeof value?.then === 'function' ? value.then(fn, onError) : fn(value);
}

// The refusals that mean "these ops do not apply to the state now" (nothing changed).
export const NOT_APPLICABLE = new Set(['patch-failed', 'precondition-failed', 'invalid-patch']);

function notApplicable(error) {
  if (NOT_APPLICABLE.has(error?.code)) return null;
  throw error;
}

/**
 * emitter.patch(ops): its events, or null when the ops do not apply to the
 * emitter's state (the caller tries another way); any other failure throws
 * (or rejects).
 */
export function patchIfApplies(emitter, ops) {
  try {
    const out = emitter.patch(ops);
    return typeof out?.then === 'function' ? out.catch(notApplicable) : out;
  } catch (error) {
    return notApplicable(error);
  }
}
