// Approvals checked and consumed by the proxy, for backends that cannot
// (issue 24, docs/wire.md section 8). A RunAgentInput.resume entry carrying
// one of our approvals (payload.approval: {path, seq, digest, epoch}, section
// 7) is judged before the run goes upstream, against the thread's state, the
// one the proxy vouches for:
//  - it verifies (the digest of the thread's value at its path): it is
//    consumed once per (thread, interrupt) in the proxy's store (memory, or
//    the --redis one) and the run is forwarded;
//  - it does not: nothing reaches the upstream; the client gets RUN_STARTED,
//    the catch-up (so its guard shows the current value) and RUN_ERROR code
//    'changed';
//  - it was already forwarded (a resume re-sent after a cut, from a new
//    page): not forwarded again; the client is attached to the first run's
//    stream from its start while the proxy holds it, else it gets the
//    catch-up and RUN_FINISHED;
//  - another approval for an interrupt already consumed: RUN_ERROR code
//    'already-consumed'.
// Entries without our approval (a plain { approved: true }) pass as before.
import { consumeApproval } from '../server/approvals.js';
import { memoryStore } from '../server/store/memory-store.js';
import { verifyApproval } from '../server/verify-approval.js';
import { runError } from './events.js';

const SSE_HEAD = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' };

/** The resume entries that carry one of our approvals: [{ interruptId, approval }]. */
export function approvalEntries(input) {
  const resume = Array.isArray(input?.resume) ? input.resume : [];
  const found = [];
  for (const entry of resume) {
    const approval = entry?.payload?.approval;
    if (entry?.status !== 'resolved' || entry.payload.approved !== true || approval === null || typeof approval !== 'object') continue;
    if (typeof entry.interruptId === 'string' && entry.interruptId) found.push({ interruptId: entry.interruptId, approval });
  }
  return found;
}

/** Per proxy: the store approvals are consumed in, and the run that forwarded each (thread, interrupt). */
export function approvalBook(store) {
  return { store: store ?? memoryStore(), runs: new Map() };
}

const bookKey = (threadId, interruptId) => JSON.stringify([threadId, interruptId]);

/**
 * Judges the request's approvals on `thread`: { forward: true, note(run) } to
 * start the run (note() records it as the one that carried them), or
 * { forward: false, answer(res, attach) } to answer without the upstream.
 */
export async function judgeApprovals(book, thread, input) {
  const entries = approvalEntries(input);
  if (entries.length === 0) return { forward: true, note: () => {} };
  const state = thread.vouched ? thread.state : undefined;
  const decisions = [];
  for (const { interruptId, approval } of entries) {
    // A refusal consumes nothing, so each is verified before any is recorded.
    const fresh = !(await book.store.peek(thread.id, interruptId));
    if (fresh && (state === undefined || !verifyApproval(approval, state))) return refusal(thread, input, 'changed', interruptId);
  }
  for (const { interruptId, approval } of entries) {
    const decision = await consumeApproval(approval, state ?? {}, { store: book.store, threadId: thread.id, interruptId });
    if (!decision.ok && decision.reason === 'already-consumed') return refusal(thread, input, 'already-consumed', interruptId);
    if (!decision.ok) return refusal(thread, input, 'changed', interruptId);
    decisions.push({ interruptId, replayed: decision.replayed });
  }
  if (decisions.every((d) => !d.replayed)) {
    return { forward: true, note: (run) => decisions.forEach((d) => book.runs.set(bookKey(thread.id, d.interruptId), run)) };
  }
  return replayed(book, thread, input, decisions);
}

// Already forwarded: the first run's stream, from its start, while it is held.
function replayed(book, thread, input, decisions) {
  const first = book.runs.get(bookKey(thread.id, decisions[0].interruptId));
  const held = first !== undefined && thread.runs.has(first) ? first : null;
  return {
    forward: false,
    async answer(res, attach, position) {
      if (held) return attach({ run: held, n: 0 });
      return writeEvents(res, [started(input), ...(await thread.catchUpEvents(position)), finished(input)]);
    },
  };
}

function refusal(thread, input, code, interruptId) {
  const message = code === 'already-consumed'
    ? `interrupt ${interruptId} was already resolved by another approval; nothing was forwarded`
    : `the approval for interrupt ${interruptId} is not of the thread's current value; nothing was forwarded`;
  return {
    forward: false,
    async answer(res, attach, position) {
      return writeEvents(res, [started(input), ...(await thread.catchUpEvents(position)), runError(code, message)]);
    },
  };
}

const started = (input) => ({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
const finished = (input) => ({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });

function writeEvents(res, events) {
  res.writeHead(200, SSE_HEAD);
  res.end(events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join(''));
}
