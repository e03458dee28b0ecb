// consumeApproval / effectKey: an approval is acted on once. verifyApproval
// says whether the agent still holds what the person approved; it cannot say
// whether the agent already acted on it, and an AG-UI resume "must be safe to
// replay" (a client re-sends it after a cut; a server dies between consuming
// and acting). consumeApproval records the approval once per interrupt in the
// emitter's store, so a re-sent one gets the first decision back instead of a
// second effect, and effectKey gives the effect itself an idempotency key for
// the API that performs it (a payment, an email), which covers a process that
// dies after consuming and before (or while) acting.
import { stateDigest } from '../engine/canonical.js';
import { syncTypeError } from '../engine/errors.js';
import { initEngine } from '../engine/init-engine.js';
import { readyEngine } from '../engine/loader.js';
import { checkKey, checkStore } from './store/contract.js';
import { verifyApproval } from './verify-approval.js';

// The approval's identity, or null when it is malformed (getters may throw: still null).
function approvalFields(approval) {
  try {
    if (approval === null || typeof approval !== 'object') return null;
    const { path, seq, digest, epoch } = approval;
    if (typeof path !== 'string' || typeof digest !== 'string') return null;
    return { path, seq: Number.isSafeInteger(seq) ? seq : null, digest, epoch: typeof epoch === 'string' ? epoch : null };
  } catch {
    return null;
  }
}

function optionalId(value, name) {
  if (value !== undefined && value !== null && typeof value !== 'string') throw syncTypeError('invalid-argument', `${name} must be a string`);
  return value ?? null;
}

/**
 * A stable idempotency key (64 hex digits) for the effect an approval
 * authorizes: the SHA-256 of the canonical JSON of threadId, interruptId
 * (default approval.interruptId), the approval's path, seq, epoch and digest.
 * The same approval re-sent gives the same key, in any process. Needs a
 * loaded engine, as stateDigest does. Throws 'invalid-argument' for a malformed approval.
 */
export function effectKey(approval, { threadId, interruptId } = {}) {
  const fields = approvalFields(approval);
  if (fields === null) throw syncTypeError('invalid-argument', 'effectKey() needs an approval { path, seq, digest, epoch }');
  const interrupt = optionalId(interruptId, 'effectKey() interruptId') ?? optionalId(approval.interruptId, 'approval.interruptId');
  const identity = { v: 1, threadId: optionalId(threadId, 'effectKey() threadId'), interruptId: interrupt, ...fields };
  return stateDigest(identity).slice('sha256:'.length);
}

function consumeOptions(approval, options) {
  if (options === null || typeof options !== 'object') throw syncTypeError('invalid-options', 'consumeApproval() needs options { store, threadId, interruptId }');
  const store = checkStore(options.store, 'consumeApproval() option store');
  const threadId = checkKey(options.threadId, 'consumeApproval() option threadId');
  let interruptId = options.interruptId;
  if (interruptId === undefined && approval !== null && typeof approval === 'object') interruptId = approval.interruptId;
  if (interruptId !== undefined && (typeof interruptId !== 'string' || interruptId.length === 0)) {
    throw syncTypeError('invalid-options', 'consumeApproval() interruptId must be a non-empty string');
  }
  return { store, threadId, interruptId };
}

const refused = (reason) => ({ ok: false, decision: 'refused', replayed: false, effectKey: null, reason });

// A recorded decision compared with this approval's key.
function answerFromRecord(recorded, key) {
  let record;
  try {
    record = JSON.parse(recorded);
  } catch {
    record = null;
  }
  if (record?.effectKey !== key) return refused('already-consumed'); // the interrupt was resolved by another approval
  return { ok: true, decision: 'approved', replayed: true, effectKey: key };
}

/**
 * Verifies `approval` against `agentState` as verifyApproval does and records
 * it, once, in `store` under (threadId, interruptId): { ok, decision, replayed,
 * effectKey, reason? }.
 *  - first time, verified: { ok: true, decision: 'approved', replayed: false, effectKey };
 *  - the same approval again (a re-sent resume, another instance, after a
 *    restart), whatever the state is now: the first decision, replayed: true;
 *  - another approval for an interrupt already consumed: refused, 'already-consumed';
 *  - not verified: refused, 'changed' ('invalid-token' when malformed); nothing
 *    is recorded (a refusal consumes nothing, the person may approve again).
 * Act only on ok, with effectKey as the effect's idempotency key: a replayed
 * decision may mean the first consumer died before acting, or after.
 * Without an interruptId, each distinct approval is consumed once. Rejects
 * with 'store-unavailable' when the store is unreachable: then nothing is decided.
 */
export async function consumeApproval(approval, agentState, options) {
  const { store, threadId, interruptId } = consumeOptions(approval, options);
  if (!readyEngine()) await initEngine();
  if (approvalFields(approval) === null) return refused('invalid-token');
  const key = effectKey(approval, { threadId, interruptId });
  const id = interruptId ?? `approval:${key}`;
  const recorded = await store.peek(threadId, id);
  if (recorded !== null) return answerFromRecord(recorded, key);
  if (!verifyApproval(approval, agentState)) return refused('changed');
  const record = JSON.stringify({ decision: 'approved', effectKey: key, at: Date.now() });
  const claim = await store.claim(threadId, id, record);
  if (!claim.ok) return answerFromRecord(claim.existing, key); // a concurrent consumer was first
  return { ok: true, decision: 'approved', replayed: false, effectKey: key };
}
