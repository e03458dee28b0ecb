// consumeApproval / effectKey: an approval is acted on once. verifyApproval
// says whether the agent still holds what the person approved; it cannot say
// whether the agent already acted on it, and an AG-UI resume "must be safe to
// replay" (a client re-sends it after a cut; a server dies between consuming
// and acting). consumeApproval records the approval once per interrupt in the
// emitter's store, so a re-sent one gets the first decision back instead of a
// second effect, and effectKey gives the effect itself an idempotency key for
// the API that performs it (a payment, an email), which covers a process that
// dies after consuming and before (or while) acting.
// The decisions (the key's identity, the record, a replay or another
// approval's record, the verification) are the core's
// (src/facade/approval_consume.h), the ones Python's consume_approval asks, so
// the two share one store's records and keys. This file checks arguments and
// does the store's I/O.
import { EngineLink } from '../engine/engine-link.js';
import { failureCode, syncTypeError } from '../engine/errors.js';
import { serverEngineLink } from '../engine/init-engine.js';
import { loadEmitterEngine } from './emitter.js';
import { checkKey, checkStore } from './store/contract.js';
import { namedActivityText } from './verify-approval.js';

// peek, claim, then the answer; one more round when a claim is lost to a racing request.
const MAX_STEPS = 6;

// The core's refusal of the arguments (a TypeError, as the checks made here).
function misuse(failure, fallback, message) {
  return syncTypeError(failureCode(failure, fallback), message);
}

function optionalId(value, name) {
  if (value !== undefined && value !== null && typeof value !== 'string') throw syncTypeError('invalid-argument', `${name} must be a string`);
  return value ?? null;
}

// The approval as JSON text for the core: anything JSON cannot hold (or a
// getter that throws) is no approval, which the core calls malformed.
function approvalText(approval) {
  try {
    return approval !== null && typeof approval === 'object' && !Array.isArray(approval) ? JSON.stringify(approval) ?? 'null' : 'null';
  } catch {
    return 'null';
  }
}

// `known` as a request, with the approval's, the state's and the named activity's text spliced in as they are.
function requestText(known, approval, state, activities = '') {
  const rest = JSON.stringify(known).slice(1);
  return `{"approval":${approval},${state === undefined ? '' : `"state":${state},`}${activities && `"activities":${activities},`}${rest}`;
}

/**
 * A stable idempotency key (64 hex digits) for the effect an approval
 * authorizes: the SHA-256 of the canonical JSON of threadId, interruptId
 * (default approval.interruptId), the approval's path, seq, epoch and digest
 * (and messageId, for an approval of an activity).
 * The same approval re-sent gives the same key, in any process and in Python.
 * Needs the sender engine (initServerEngine()). Throws 'invalid-argument' for a malformed approval.
 */
export function effectKey(approval, { threadId, interruptId } = {}) {
  const link = serverEngineLink('effectKey', 'effectKey()');
  const known = { threadId: optionalId(threadId, 'effectKey() threadId'), interruptId: optionalId(interruptId, 'effectKey() interruptId') };
  const answer = link.callJson((e) => e.module.effectKey(requestText(known, approvalText(approval))));
  if (!answer.ok) throw misuse(answer, 'invalid-argument', `effectKey(): ${answer.message}`);
  return answer.effectKey;
}

function consumeOptions(options) {
  if (options === null || typeof options !== 'object') throw syncTypeError('invalid-options', 'consumeApproval() needs options { store, threadId, interruptId }');
  const store = checkStore(options.store, 'consumeApproval() option store');
  const threadId = checkKey(options.threadId, 'consumeApproval() option threadId');
  return { store, threadId, interruptId: options.interruptId ?? null, activities: options.activities };
}

function stateText(agentState) {
  try {
    return JSON.stringify(agentState); // undefined: none (it cannot match any digest)
  } catch {
    return undefined;
  }
}

/**
 * Verifies `approval` against `agentState` as verifyApproval does (an
 * approval with a messageId against options.activities' content of that
 * activity: emitter.activities or { messageId: content }) and records
 * it, once, in `store` under (threadId, interruptId): { ok, decision, replayed,
 * effectKey, reason? }.
 *  - first time, verified: { ok: true, decision: 'approved', replayed: false, effectKey };
 *  - the same approval again (a re-sent resume, another instance, after a
 *    restart), whatever the state is now: the first decision, replayed: true;
 *  - another approval for an interrupt already consumed: refused, 'already-consumed';
 *  - not verified: refused, 'changed' ('invalid-token' when malformed,
 *    'missing' when it names an activity the agent does not hold); nothing
 *    is recorded (a refusal consumes nothing, the person may approve again).
 * Act only on ok, with effectKey as the effect's idempotency key: a replayed
 * decision may mean the first consumer died before acting, or after.
 * Without an interruptId, each distinct approval is consumed once. Rejects
 * with 'store-unavailable' when the store is unreachable: then nothing is decided.
 */
export async function consumeApproval(approval, agentState, options) {
  const { store, threadId, interruptId, activities } = consumeOptions(options);
  const link = EngineLink.forEngine(await loadEmitterEngine());
  const [approvalJson, state, named] = [approvalText(approval), stateText(agentState), namedActivityText(approval, activities)];
  const known = { threadId, interruptId, nowMs: Date.now() };
  for (let step = 0; step < MAX_STEPS; step++) {
    const next = link.callJson((e) => e.module.consumeApprovalStep(requestText(known, approvalJson, state, named)));
    if (!next.ok) throw misuse(next, 'invalid-options', `consumeApproval(): ${next.message}`);
    if (next.step === 'answer') return next.answer;
    if (next.step === 'peek') {
      known.record = await store.peek(threadId, next.recordId);
      continue;
    }
    const claim = await store.claim(threadId, next.recordId, next.record);
    if (claim.ok) known.claimed = true;
    else known.record = claim.existing; // a concurrent consumer was first
  }
  throw new Error(`consumeApproval did not settle in ${MAX_STEPS} steps`); // a bug in the core's steps
}
