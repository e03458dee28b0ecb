// Cross-language, live (issue 23, section 3): a Python AG-UI server
// (tests/python/live/server.py: uvicorn on 127.0.0.1, the ag-ui-protocol SDK's
// event classes through agui_state_sync.sequence_state) read from Node by
// StateSyncHttpAgent through the seeded TCP fault link (cuts, stalls,
// re-chunking). Nothing is mocked: the agent's fetch is the platform's.
// For every seed, one thread: three runs that redraft a proposal
// {payee, amount}, the last ending with an approval interrupt; the person
// approves with the browser API (guard.view / approve / resumeEntry). A resume
// carrying an approval of the second run's proposal (stale: the agent moved
// on) goes first and must be refused; then the right one, whose first
// connection is cut after the server paid, so it is re-sent.
//  - whenever the client says 'synced', its state is one the server held
//    (the server records its emitter's state before each event leaves);
//  - after every run the client is 'synced' on the server's final state;
//  - the approval is verified and consumed in Python (consume_approval against
//    the agent's own checkpoint): the stale one is refused ('changed') and
//    pays nothing; the right one pays once (once()), the value the person
//    approved, however often its resume was re-sent.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { startFaultLink } from '../../support/fault-link.mjs';
import { startPythonServer } from './python-server.mjs';
import { jsDir, plain } from '../../js/support.mjs';

const { StateSyncHttpAgent } = await import(join(jsDir, 'src', 'ag-ui.js'));

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';

const SEEDS = Array.from({ length: 12 }, (_, i) => i + 1);
const DRAFT_RUNS = 3;
const BACKOFF = { initialMs: 5, maxMs: 50 };
const FAULTS = { cutProbability: 0.6, cutAfterBytes: [200, 4000], stallProbability: 0.02, stallMs: 30, delayMs: [0, 1], chunkBytes: [1, 900] };
// The resume's first connection: cut for sure, past its first 1500 bytes.
// Before the effect the server sends only RUN_STARTED and the catch-up (the
// client is current after the checked draft runs: no state, well under 1500
// bytes even as a whole snapshot); every later byte was written after the
// payment, and the confirmation that follows it is longer than 3000 bytes.
const CUT_AFTER_EFFECT = { cutProbability: 1, cutAfterBytes: [1500, 3000] };

let server;
const totals = { cuts: 0, connections: 0, resumeRequests: 0, replayedDecisions: 0, syncedChecks: 0 };

before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.close();
  console.log(`# live: ${SEEDS.length} seeds, ${totals.connections} connections, ${totals.cuts} cuts, ` +
    `${totals.syncedChecks} synced states checked, ${totals.resumeRequests} resume requests, ` +
    `${totals.replayedDecisions} replayed decisions`);
});

/** The Python server as a child process: { port, view(threadId), close() }. */
async function startServer() {
  const server = await startPythonServer('server.py');
  return {
    ...server,
    async view(threadId) {
      const response = await fetch(`http://127.0.0.1:${server.port}/threads/${encodeURIComponent(threadId)}`);
      assert.equal(response.status, 200);
      return response.json();
    },
  };
}

/** The client's states while 'synced' are the server's; it ends 'synced' on the server's final state. */
async function checkAgainstServer(agent, threadId, synced, what) {
  const view = await server.view(threadId);
  for (const state of synced.splice(0)) {
    totals.syncedChecks++;
    assert.ok(view.held.some((held) => isDeepStrictEqual(held, state)),
      `${what}: the client was synced on a state the server never held: ${JSON.stringify(state)}`);
  }
  assert.equal(agent.stateSync.status, 'synced', `${what}: the client ends synced`);
  assert.deepEqual(plain(agent.state), view.state, `${what}: the client converged on the server's state`);
  assert.equal(agent.stateSync.lastSeq, view.seq, `${what}: at the server's seq`);
  return view;
}

/** A fetch that gives the next request's connection `faults`, then the link's usual ones again. */
function linkFetch(link) {
  const control = { next: null };
  const fetchVia = async (url, init) => {
    const faults = control.next;
    if (faults === null) return fetch(url, init);
    control.next = null;
    link.setFaults(faults);
    try {
      return await fetch(url, init); // the head arrived: the link accepted (and planned) that connection
    } finally {
      link.setFaults(FAULTS);
    }
  };
  return { control, fetchVia };
}

/** The person approves what the guard shows at /proposal, bound to the open interrupt. */
function approveProposal(agent, interruptId) {
  const guard = agent.stateSync.guard;
  assert.deepEqual(guard.interrupts().map((i) => i.id), [interruptId], 'the run ended with the approval interrupt');
  const view = guard.view('/proposal');
  assert.equal(view.ok, true, JSON.stringify(view));
  const result = guard.approve(view.token, { interruptId });
  assert.equal(result.ok, true, JSON.stringify(result));
  return { value: plain(view.value), entry: guard.resumeEntry(result.approval) };
}

/** An approval of what the person saw now, not bound to an interrupt (none is open yet). */
function approveEarly(agent) {
  const view = agent.stateSync.guard.view('/proposal');
  assert.equal(view.ok, true, JSON.stringify(view));
  const result = agent.stateSync.guard.approve(view.token);
  assert.equal(result.ok, true, JSON.stringify(result));
  return { value: plain(view.value), approval: result.approval };
}

/** The stale approval was refused every time it came, and nothing was paid. */
function checkRefused(view, what) {
  assert.ok(view.decisions.length >= 1, `${what}: the stale approval reached consume_approval`);
  for (const decision of view.decisions) {
    assert.deepEqual(decision, { ok: false, decision: 'refused', replayed: false, effectKey: null, reason: 'changed' }, what);
  }
  assert.deepEqual(view.payments, [], `${what}: nothing was paid`);
  return view.decisions.length;
}

/** The approval was consumed once, then replayed to every re-sent resume; the payment ran once. */
function checkPayment(view, refused, approved, what) {
  const [first, ...again] = view.decisions.slice(refused);
  assert.ok(first, `${what}: the approval reached consume_approval`);
  assert.deepEqual({ ...first, effectKey: 'k' }, { ok: true, decision: 'approved', replayed: false, effectKey: 'k' }, what);
  assert.ok(again.length >= 1, `${what}: the resume was re-sent after the payment (the forced cut)`);
  for (const decision of again) assert.deepEqual(decision, { ...first, replayed: true }, `${what}: a re-sent resume replays`);
  assert.equal(view.payments.length, 1, `${what}: the payment ran exactly once`);
  assert.deepEqual(view.payments[0], { key: first.effectKey, proposal: approved }, `${what}: it paid what the person approved`);
  assert.deepEqual(view.state.proposal, null);
  assert.deepEqual(view.state.paid, { ...approved, ref: first.effectKey.slice(0, 16) });
  totals.replayedDecisions += again.length;
}

for (const seed of SEEDS) {
  test(`seed ${seed}: synced states are the server's, the client converges, the approval pays once`, { timeout: 60000 }, async () => {
    const link = await startFaultLink({ target: { host: '127.0.0.1', port: server.port }, seed, ...FAULTS });
    const { control, fetchVia } = linkFetch(link);
    const threadId = `live-${seed}`;
    const agent = new StateSyncHttpAgent({ url: link.url('/agent'), threadId, fetch: fetchVia, stateSync: { backoff: BACKOFF } });
    try {
      await agent.ready;
      const synced = [];
      agent.stateSync.subscribe(() => {
        if (agent.stateSync.status === 'synced') synced.push(plain(agent.stateSync.state));
      });
      let early;
      for (let run = 1; run <= DRAFT_RUNS; run++) {
        await agent.runAgent({ runId: `${threadId}-draft-${run}`, forwardedProps: { askApproval: run === DRAFT_RUNS } });
        await checkAgainstServer(agent, threadId, synced, `draft run ${run}`);
        if (run === DRAFT_RUNS - 1) early = approveEarly(agent);
      }
      const interruptId = `approve-${threadId}-draft-${DRAFT_RUNS}`;
      const approved = approveProposal(agent, interruptId);
      assert.notDeepEqual(early.value, approved.value, 'the last run changed the proposal');
      const stale = agent.stateSync.guard.resumeEntry({ ...early.approval, interruptId });
      await agent.runAgent({ runId: `${threadId}-stale`, resume: [stale] });
      const refused = checkRefused(await checkAgainstServer(agent, threadId, synced, 'the stale resume'), `seed ${seed}`);
      control.next = CUT_AFTER_EFFECT;
      await agent.runAgent({ runId: `${threadId}-pay`, resume: [approved.entry] });
      const view = await checkAgainstServer(agent, threadId, synced, 'the resume');
      checkPayment(view, refused, approved.value, `seed ${seed}`);
      totals.resumeRequests += view.requests.filter((r) => r.resume).length;
      totals.cuts += link.stats.cuts;
      totals.connections += link.stats.connections;
    } finally {
      agent.dispose();
      await link.close();
    }
  });
}

// asyncio logs each write to a connection the link had cut; anything else the
// server logs (an exception in the agent or the app, a sequence_state warning
// that the agent's delta did not apply) is a failure.
const EXPECTED_LOG = /^socket\.send\(\) raised exception\.$/;

test('the server logged nothing but writes to cut connections', () => {
  const unexpected = server.stderr().split('\n').filter((line) => line && !EXPECTED_LOG.test(line));
  assert.deepEqual(unexpected, []);
});

test('the faults happened: cuts on most seeds, every resume re-sent', () => {
  assert.ok(totals.cuts >= SEEDS.length, `cuts: ${totals.cuts}`);
  assert.ok(totals.resumeRequests >= 2 * SEEDS.length, `resume requests: ${totals.resumeRequests}`);
  assert.ok(totals.syncedChecks > 0);
});
