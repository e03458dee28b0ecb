// The agent side of user edits (docs/wire.md section 9): a RunAgentInput's
// forwardedProps.stateSync.edits, read as hostile input (it comes from a
// browser), placed in the server's numbering, and judged by the thread's
// StateEmitter before the agent runs. Used by the proxy and sequenceState(),
// and exported from agui-state-sync/server for servers of their own.
import { syncError, syncTypeError } from '../engine/errors.js';

/** Most edits one RunAgentInput may carry: the client engine's own cap on pending edits. */
export const MAX_RUN_EDITS = 1024;
/** Longest editId (UTF-8 bytes): the emitter's limit. */
export const MAX_EDIT_ID_BYTES = 256;
// The emitter's default maxDepth; an edit's ops nest two levels (array, op) above a value.
const DEFAULT_MAX_DEPTH = 128;
const OPS_ENVELOPE = 2;

const utf8 = new TextEncoder();

function refuse(message) {
  return syncError('invalid-request', `forwardedProps.stateSync.edits${message}`, { status: 400 });
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

// True when `value` nests containers deeper than `limit` (a scalar is 0 deep).
// Iterative: no input can exhaust the stack.
function nestsDeeper(value, limit) {
  const values = [value];
  const depths = [0];
  while (values.length) {
    const v = values.pop();
    const d = depths.pop();
    if (v === null || typeof v !== 'object') continue;
    if (d + 1 > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      values.push(child);
      depths.push(d + 1);
    }
  }
  return false;
}

// One entry, checked: { editId, baseSeq (a seq or null), ops }. Unknown keys are left behind.
function readEdit(entry, i, maxDepth) {
  if (!isObject(entry)) throw refuse(`[${i}] must be an object { editId, baseSeq, ops }`);
  const { editId, baseSeq, ops } = entry;
  if (typeof editId !== 'string' || editId.length === 0 || utf8.encode(editId).length > MAX_EDIT_ID_BYTES) {
    throw refuse(`[${i}].editId must be a non-empty string of at most ${MAX_EDIT_ID_BYTES} UTF-8 bytes`);
  }
  if (baseSeq !== undefined && baseSeq !== null && !(Number.isSafeInteger(baseSeq) && baseSeq >= 0)) {
    throw refuse(`[${i}].baseSeq must be a seq (an integer >= 0) or null`);
  }
  // The ops' contents are the edit's own business: a bad op is its rejection, not a bad request.
  if (!Array.isArray(ops)) throw refuse(`[${i}].ops must be an array of RFC 6902 operations`);
  if (nestsDeeper(ops, maxDepth + OPS_ENVELOPE)) throw refuse(`[${i}].ops nest deeper than ${maxDepth}`);
  return { editId, baseSeq: baseSeq ?? null, ops };
}

/**
 * forwardedProps.stateSync.edits of `input`, checked: a fresh array of
 * { editId, baseSeq, ops }, or null when the input carries none (no stateSync,
 * or no `edits` in it). Throws an AguiSyncError 'invalid-request' with
 * `status: 400` for anything malformed or oversized: not an array, more than
 * MAX_RUN_EDITS edits, an entry that is not { editId: string (at most
 * MAX_EDIT_ID_BYTES), baseSeq?: seq | null, ops: array }, or ops nested deeper
 * than `maxDepth` (the emitter's, default 128). Its size is bounded by the
 * request body's limit, which is the host's.
 */
export function readRunEdits(input, { maxDepth = DEFAULT_MAX_DEPTH } = {}) {
  if (!Number.isSafeInteger(maxDepth) || maxDepth <= 0) throw syncTypeError('invalid-argument', 'readRunEdits() maxDepth must be a positive integer');
  const stateSync = isObject(input) && isObject(input.forwardedProps) ? input.forwardedProps.stateSync : undefined;
  if (!isObject(stateSync) || stateSync.edits === undefined) return null;
  const { edits } = stateSync;
  if (!Array.isArray(edits)) throw refuse(' must be an array of { editId, baseSeq, ops }');
  if (edits.length > MAX_RUN_EDITS) throw refuse(` holds ${edits.length} edits; at most ${MAX_RUN_EDITS} are accepted`);
  return edits.map((entry, i) => readEdit(entry, i, maxDepth));
}

/** The epoch the client says it is in (forwardedProps.stateSync.epoch), or null: as readResyncRequest reads it. */
export function clientEpoch(input) {
  const epoch = isObject(input) && isObject(input.forwardedProps) && isObject(input.forwardedProps.stateSync)
    ? input.forwardedProps.stateSync.epoch
    : undefined;
  if (typeof epoch === 'string') return epoch;
  return Number.isSafeInteger(epoch) ? String(epoch) : null;
}

/**
 * emitter.applyEdits() for edits from readRunEdits(), whose baseSeqs count in
 * the client's `epoch` (clientEpoch()): the engine places them (another
 * epoch's edits are judged as made at the emitter's first seq).
 */
export function judgeEdits(emitter, edits, epoch, policy) {
  return emitter.applyEdits(edits, policy, { epoch: epoch ?? null });
}

/**
 * Reads `input`'s forwardedProps.stateSync.edits (readRunEdits) and judges
 * them with `emitter` under `policy` ({ ownership, onConflict }): null when
 * the input carries no edits, else { events, results, state }: the events to
 * send the thread's clients (their metadata.acks hold the verdicts), one
 * verdict per edit, and a copy of the emitter's state afterwards, which is the
 * state to run the agent on (RunAgentInput.state). Throws as readRunEdits
 * (400, nothing applied) and emitter.applyEdits do.
 */
export function applyRunEdits(emitter, input, policy, { maxDepth } = {}) {
  if (emitter === null || typeof emitter !== 'object' || typeof emitter.applyEdits !== 'function') {
    throw syncTypeError('invalid-argument', 'applyRunEdits() needs a StateEmitter');
  }
  const edits = readRunEdits(input, { maxDepth });
  if (edits === null) return null;
  const judged = judgeEdits(emitter, edits, clientEpoch(input), policy);
  const answer = ({ events, results }) => ({ events, results, state: structuredClone(emitter.state) });
  return typeof judged?.then === 'function' ? judged.then(answer) : answer(judged); // a store-bound emitter: a Promise
}
