// createStateSync() options: checked here (a TypeError with code
// 'invalid-options' for a wrong one), then passed to the SyncFacade as JSON
// (src/facade/sync_facade.h).
import { describeValue, jsonText, optionsObject, WASM_OPTIONS } from '../engine/options.js';
import { syncTypeError } from '../engine/errors.js';
import { checkEditPolicy } from '../shared/edit-policy.js';
import { persistOptions } from './persist/options.js';

// createStateSync: positive integers passed to the engine as they are.
const SYNC_LIMIT_OPTIONS = ['reorderWindow', 'reorderBytes', 'maxGapEvents', 'maxEventBytes', 'maxDepth', 'maxStateBytes', 'staleAfterMs', 'maxActivities', 'maxActivityBytes'];
const SYNC_GUARD_OPTIONS = ['trustUnsequenced', 'now', 'staleCheckMs'];
const SYNC_EDIT_OPTIONS = ['ownership', 'onConflict', 'clientId'];
const SYNC_OPTIONS = new Set([...SYNC_LIMIT_OPTIONS, ...SYNC_GUARD_OPTIONS, ...SYNC_EDIT_OPTIONS, 'initialState', 'persist', 'activities', ...WASM_OPTIONS]);
const MAX_CLIENT_ID_BYTES = 128; // the engine's limit (src/facade/sync_facade.cpp)
const DEFAULT_MAX_EVENT_BYTES = 8 << 20; // Options::maxEventBytes (include/agui_sync/options.h)

const defaultNow = typeof performance === 'object' && performance !== null && typeof performance.now === 'function'
  ? () => performance.now()
  : () => Date.now();

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
  for (const name of ['trustUnsequenced', 'activities']) {
    if (options[name] === undefined) continue;
    if (typeof options[name] !== 'boolean') throw syncTypeError('invalid-options', `option ${name} must be a boolean`);
    out[name] = options[name];
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
