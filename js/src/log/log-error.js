// Errors of agui-state-sync/log: AguiSyncErrors (errors.js) that also say
// where in the log they happened, so a tool can point at the line or event.
import { syncError, syncTypeError } from '../engine/errors.js';

/**
 * An AguiSyncError with `code`, plus `line` (1-based line of a log text) or
 * `index` (0-based position in an event array) when given.
 */
export function logError(code, message, where = {}) {
  const error = syncError(code, message);
  if (where.line !== undefined) error.line = where.line;
  if (where.index !== undefined) error.index = where.index;
  return error;
}

/** Throws 'invalid-event' unless `event` is an object with a string `type`. */
export function checkEvent(event, index) {
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    throw logError('invalid-event', `event ${index}: not an object`, { index });
  }
  if (typeof event.type !== 'string' || event.type === '') {
    throw logError('invalid-event', `event ${index}: no "type"`, { index });
  }
}

/** A wrong argument: an AguiSyncError 'invalid-argument' that is also a TypeError. */
export function argumentError(message) {
  return syncTypeError('invalid-argument', message);
}

/** Throws argumentError() unless `events` is an array. */
export function checkEventArray(events, what = 'events') {
  if (!Array.isArray(events)) throw argumentError(`${what} must be an array of AG-UI events`);
}
