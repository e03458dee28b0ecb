// What an emitter store is (memoryStore(), redisStore(), or your own). The
// store-bound emitter (durable-emitter.js) only ever calls these; each is
// async, and rejects (with any error) only when the store cannot be reached,
// never for a lost race, which is an ordinary answer:
//
//   load(key)                    -> null | { epoch, seq, state, stateSeq?, events }
//        state: the state's JSON text at stateSeq (default: seq); events: the
//        log's JSON texts, oldest first, a consecutive run of seqs ending at
//        seq (maybe empty) that holds every event after stateSeq.
//   init(key, { epoch, seq, state })              -> { ok: true } | { ok: false }
//        creates the thread unless it exists (then ok: false: load it).
//   append(key, { baseSeq, epoch, state, events, maxEvents, maxBytes })
//                                                -> { ok: true } | { ok: false }
//        events: [{ seq, text, snapshot }]; lands with state only if the thread
//        is still at baseSeq / epoch; the log is then trimmed to maxEvents and
//        maxBytes (a snapshot empties it first), never past stateSeq.
//        state: the JSON text at the last event's seq (that seq becomes
//        stateSeq), or undefined: keep the stored state and stateSeq. Only a
//        store with `incrementalState: true` is ever sent undefined; a store
//        without it gets the state with every append (its stateSeq is seq).
//   head(key)                    -> null | { epoch, seq }
//   reset(key, expect, { epoch, seq, state })     -> { ok: true } | { ok: false }
//        a new line with an empty log, if the thread is still at expect
//        ({ epoch, seq }) or gone.
//   claim(scope, id, value, ttlMs) -> { ok: true } | { ok: false, existing }
//        records `value` under (scope, id) once (consumeApproval).
//   peek(scope, id)              -> the value recorded under (scope, id), or null.
//   release(scope, id, value)    -> true | false  (optional) drops the record if it
//        still holds value: once() gives its lease back after a failed effect.
//   log(level, message)          'warn' | 'info': the store's logger.
//   watch(key, onChange)         -> unwatch()  (optional) onChange() after every
//        write to key by anyone: subscribed emitters hear other instances at
//        once instead of at their next poll.
import { syncTypeError } from '../../engine/errors.js';

/** The methods every store has (watch() is optional). */
export const STORE_METHODS = Object.freeze(['load', 'init', 'append', 'head', 'reset', 'claim', 'peek']);
const MAX_KEY_LENGTH = 1024;

/** Throws 'invalid-options' unless `store` has every method of the contract. */
export function checkStore(store, what) {
  if (store === null || typeof store !== 'object' || !STORE_METHODS.every((m) => typeof store[m] === 'function')) {
    throw syncTypeError('invalid-options', `${what} must be a store: memoryStore(), redisStore() or an object with ${STORE_METHODS.join(', ')}`);
  }
  return store;
}

/**
 * Throws 'invalid-options' unless `key` is a non-empty string of at most 1024
 * characters that does not start with a NUL (the library's own keys do: a
 * thread's activity record, src/emit/activity_record.h).
 */
export function checkKey(key, what) {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH || key[0] === '\u0000') {
    throw syncTypeError('invalid-options', `${what} must be a non-empty string of at most ${MAX_KEY_LENGTH} characters, not starting with a NUL`);
  }
  return key;
}

/** A positive integer option (milliseconds, counts), or `fallback` when undefined. */
export function positiveOption(value, name, fallback) {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw syncTypeError('invalid-options', `${name} must be a positive integer`);
  return value;
}

/** The logger option: { warn, info } functions (default: console). */
export function loggerOption(value, name) {
  const logger = value ?? console;
  if (logger === null || typeof logger !== 'object' || typeof logger.warn !== 'function' || typeof logger.info !== 'function') {
    throw syncTypeError('invalid-options', `${name} must be an object with warn() and info()`);
  }
  return (level, message) => {
    try {
      logger[level](`agui-state-sync: ${message}`);
    } catch {
      // a logger that throws must not break the store
    }
  };
}

// Thread keys expire after a day without a write; approvals after a week.
export const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_APPROVAL_TTL_MS = 7 * 24 * 60 * 60 * 1000;
