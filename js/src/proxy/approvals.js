// Approvals checked and consumed by the proxy, for backends that cannot
// (issue 24, docs/wire.md section 8). A RunAgentInput.resume entry carrying
// one of our approvals (payload.approval: {path, seq, digest, epoch}, section
// 7) is judged before the run goes upstream, against the thread's state, the
// one the proxy vouches for; one with a messageId (an activity's content was
// approved, section 11) against the thread's content of that activity, which
// the core asks for by name (none held: refused 'approval-stale'). The judgement is the core's (judgeApprovals,
// src/facade/approval_gate.h, the same the Python middleware asks); this file
// reads and writes the store it asks for, and answers the client:
//  - forward: verified and consumed once per (thread, interrupt) in the
//    proxy's store (memory, or the --redis one): the run goes upstream;
//  - refuse: nothing reaches the upstream; the client gets RUN_STARTED, the
//    catch-up (so its guard shows the current value) and RUN_ERROR with the
//    core's code: 'approval-stale' (not of the thread's current value),
//    'already-consumed' (another approval resolved the interrupt) or
//    'invalid-request' (a malformed approval);
//  - replay: forwarded before (a resume re-sent after a cut, from a new page):
//    not forwarded again; the client is attached to the first run's stream
//    from its start while the proxy holds it, else it gets the catch-up and
//    RUN_FINISHED.
// Entries without our approval (a plain { approved: true }) pass as before.
import { EngineLink } from '../engine/engine-link.js';
import { memoryStore } from '../server/store/memory-store.js';
import { loadEmitterEngine } from '../server/emitter.js';
import { runError } from './events.js';

const SSE_HEAD = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' };
// peek, claim, then the answer; one more round when a claim is lost to a racing request.
const MAX_STEPS = 6;

/** Whether the request has resume entries the core must look at (a cheap test before pinning a thread). */
export function carriesResume(input) {
  return Array.isArray(input?.resume) && input.resume.length > 0;
}

/** Per proxy: the store approvals are consumed in, and the run that forwarded each (thread, interrupt). */
export function approvalBook(store) {
  return { store: store ?? memoryStore(), runs: new Map() };
}

const bookKey = (threadId, interruptId) => JSON.stringify([threadId, interruptId]);

/**
 * Judges the request's approvals on `thread`: { forward: true, keep, note(run), release() } to
 * start the run (keep: it carries consumed approvals, never abandoned; note() records it as the one that carried them; release()
 * drops this request's claims when the backend refuses the run), or
 * { forward: false, answer(res, attach, position) } to answer without the upstream.
 */
export async function judgeApprovals(book, thread, input) {
  const link = EngineLink.forEngine(await loadEmitterEngine());
  const known = { threadId: thread.id, resume: input.resume, state: thread.vouched ? thread.state : undefined, records: {}, claimed: {}, activities: {} };
  for (let step = 0; step < MAX_STEPS; step++) {
    const verdict = link.callJson((engine) => engine.module.judgeApprovals(JSON.stringify({ ...known, nowMs: Date.now() })));
    if (!verdict.ok) return refusedRun(thread, input, verdict.code, verdict.message);
    await release(book.store, thread.id, verdict.releases);
    switch (verdict.verdict) {
      case 'pass': return { forward: true, note: () => {}, release: async () => {} };
      case 'forward':
        return {
          forward: true,
          keep: true, // the approved effect completes once, whoever is still reading (the core's grace period)
          note: (run) => verdict.interruptIds.forEach((id) => book.runs.set(bookKey(thread.id, id), run)),
          // The backend refused the run: the approvals are not consumed (SECURITY.md).
          release: () => release(book.store, thread.id, Object.entries(known.claimed).map(([interruptId, record]) => ({ interruptId, record }))),
        };
      case 'replay': return replayed(book, thread, input, verdict.interruptId);
      case 'refuse': return refusedRun(thread, input, verdict.code, verdict.message);
      case 'peek':
        for (const id of verdict.interruptIds) known.records[id] = await book.store.peek(thread.id, id);
        for (const id of verdict.activities ?? []) known.activities[id] = thread.activityContent(id);
        break;
      default: await claim(book.store, thread.id, verdict.claims, known);
    }
  }
  throw new Error(`the approval gate did not settle in ${MAX_STEPS} steps`); // a bug in the core's step function
}

// The core's claims, in order, up to the first one another request won.
async function claim(store, threadId, claims, known) {
  for (const { interruptId, record } of claims) {
    const won = await store.claim(threadId, interruptId, record);
    if (!won.ok) {
      known.records[interruptId] = won.existing;
      return;
    }
    known.claimed[interruptId] = record;
  }
}

// This request's claims of a run that is not forwarded: dropped, when the store can.
async function release(store, threadId, releases = []) {
  if (typeof store.release !== 'function') return;
  for (const { interruptId, record } of releases) await store.release(threadId, interruptId, record);
}

// Already forwarded: the first run's stream, from its start, while it is held.
function replayed(book, thread, input, interruptId) {
  const first = book.runs.get(bookKey(thread.id, interruptId));
  const held = first !== undefined && thread.runs.has(first) ? first : null;
  return {
    forward: false,
    async answer(res, attach, position) {
      if (held) return attach({ run: held, n: 0 });
      return writeEvents(res, [started(input), ...(await thread.catchUpEvents(position)), finished(input)]);
    },
  };
}

function refusedRun(thread, input, code, message) {
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
