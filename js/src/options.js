// Options of createStateSync(), createStateEmitter() and initEngine(): checked
// here (a TypeError with code 'invalid-options' for a wrong one), then passed
// to the C++ facades as JSON (src/facade/). The engine checks them again and
// may still refuse (initResult(); engine-link.js).
import { checkEditPolicy } from './edit-policy.js';
import { describeThrown, syncTypeError } from './errors.js';
import { persistOptions } from './persist/options.js';

// The wasm options every entry point takes (handled by loader.js, not the facades).
const WASM_OPTIONS = ['wasmBinary', 'locateFile'];

// createStateSync: positive integers passed to the engine as they are.
const SYNC_LIMIT_OPTIONS = ['reorderWindow', 'reorderBytes', 'maxGapEvents', 'maxEventBytes', 'maxDepth', 'maxStateBytes', 'staleAfterMs'];
const SYNC_GUARD_OPTIONS = ['trustUnsequenced', 'now', 'staleCheckMs'];
const SYNC_EDIT_OPTIONS = ['ownership', 'onConflict', 'clientId'];
const SYNC_OPTIONS = new Set([...SYNC_LIMIT_OPTIONS, ...SYNC_GUARD_OPTIONS, ...SYNC_EDIT_OPTIONS, 'initialState', 'persist', ...WASM_OPTIONS]);
const MAX_CLIENT_ID_BYTES = 128; // the engine's limit (src/facade/sync_facade.cpp)
const DEFAULT_MAX_EVENT_BYTES = 8 << 20; // Options::maxEventBytes (include/agui_sync/options.h)

// createStateEmitter: integers >= 0 passed as they are.
const EMITTER_COUNT_OPTIONS = ['startSeq', 'digestEvery', 'replayMaxEvents', 'replayMaxBytes', 'editHistory', 'ackHistory'];
const EMITTER_OPTIONS = new Set([
  ...EMITTER_COUNT_OPTIONS, 'epoch', 'snapshotRatio', 'guardedPaths', 'testAll', 'maxDepth', 'initialState',
  ...WASM_OPTIONS,
]);

const defaultNow = typeof performance === 'object' && performance !== null && typeof performance.now === 'function'
  ? () => performance.now()
  : () => Date.now();

function describeValue(value) {
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
function optionsObject(options, known) {
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

// --- createStateSync ----------------------------------------------------------

/** The guard's JS-side options: { now, staleCheckMs }. */
export function guardOptions(options) {
  const now = options?.now ?? defaultNow;
  if (typeof now !== 'function') throw syncTypeError('invalid-options', 'option now must be a function returning milliseconds');
  const staleCheckMs = options?.staleCheckMs ?? 0;
  if (typeof staleCheckMs !== 'number' || !(staleCheckMs >= 0) || !Number.isFinite(staleCheckMs)) {
    throw syncTypeError('invalid-options', `option staleCheckMs must be a number of milliseconds >= 0, got ${describeValue(staleCheckMs)}`);
  }
  return { now, staleCheckMs };
}

// The SyncFacade's options other than initialState, as an object.
function syncLimits(options) {
  const out = {};
  for (const name of SYNC_LIMIT_OPTIONS) {
    const value = options[name];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw syncTypeError('invalid-options', `option ${name} must be a positive integer, got ${describeValue(value)}`);
    }
    out[name] = value;
  }
  if (options.trustUnsequenced !== undefined) {
    if (typeof options.trustUnsequenced !== 'boolean') throw syncTypeError('invalid-options', 'option trustUnsequenced must be a boolean');
    out.trustUnsequenced = options.trustUnsequenced;
  }
  return out;
}

/**
 * A fresh client id for editIds ("<clientId>:<n>"): 16 random bytes as hex.
 * Random, not a counter or a clock: two tabs of one user must never mint the
 * same editId, since the agent applies each editId once.
 */
export function randomClientId() {
  const c = globalThis.crypto;
  if (!c || typeof c.getRandomValues !== 'function') {
    throw syncTypeError('invalid-options', 'no crypto.getRandomValues in this environment: pass option clientId');
  }
  const bytes = c.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

// ownership, onConflict (the agent side's checks: edit-policy.js), clientId:
// checked here so a mistake fails at createStateSync with a message naming the option.
function editOptions(options, out) {
  const policy = checkEditPolicy({ ownership: options.ownership, onConflict: options.onConflict }, 'createStateSync() options');
  if (policy.ownership !== undefined) out.ownership = policy.ownership;
  if (policy.onConflict !== undefined) out.onConflict = policy.onConflict;
  const clientId = options.clientId ?? randomClientId();
  if (typeof clientId !== 'string' || clientId.length === 0 || new TextEncoder().encode(clientId).length > MAX_CLIENT_ID_BYTES) {
    throw syncTypeError('invalid-options', `option clientId must be a non-empty string of at most ${MAX_CLIENT_ID_BYTES} UTF-8 bytes`);
  }
  out.clientId = clientId;
}

/**
 * createStateSync() options: { json: the SyncFacade's options JSON,
 * initialState: the JS state to start from, guard: guardOptions(),
 * maxEditBytes: the largest edit the engine takes (its maxEventBytes),
 * persist: persistOptions() (null without) }.
 */
export function syncOptions(options) {
  const checked = optionsObject(options, SYNC_OPTIONS);
  const engineJson = syncLimits(checked);
  editOptions(checked, engineJson);
  const limits = JSON.stringify(engineJson);
  let json = limits;
  let initialState = {};
  if (checked.initialState !== undefined) {
    const stateJson = jsonText(checked.initialState, 'initialState', 'invalid-options');
    // The JS state starts as exactly what the engine parses, not as the caller's
    // object (which may hold undefined, Dates, toJSON, ... and may be mutated later).
    json = (limits === '{}' ? '{' : limits.slice(0, -1) + ',') + '"initialState":' + stateJson + '}';
    initialState = JSON.parse(stateJson);
  }
  const maxEditBytes = engineJson.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
  return { json, initialState, guard: guardOptions(options), maxEditBytes, persist: persistOptions(checked.persist) };
}

// --- createStateEmitter -------------------------------------------------------

/** A fresh random epoch: crypto.randomUUID() where available. */
function randomEpoch() {
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
  return JSON.stringify(out);
}
