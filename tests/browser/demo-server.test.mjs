// Protocol tests of the demo server (no browser): the scripted agent speaks
// AG-UI over SSE, its state events reconstruct exactly the agent's state, a
// reconnect with lastSeq gets a catch-up, approvals are verified against the
// agent's own state, and the fault schedule is a pure function of the seed.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DEMO = path.join(ROOT, 'demo');
const require = createRequire(path.join(DEMO, 'package.json'));
const { applyPatch } = require('fast-json-patch');
const { startServer } = await import(path.join(DEMO, 'server', 'server.mjs'));
const { stateDigest } = await import(path.join(DEMO, 'server', 'pkg.mjs'));
const { fate, normalizeFaults } = await import(path.join(DEMO, 'server', 'faults.mjs'));

// Reads a whole SSE response into {events:[{id, data}], comments:[]}.
async function readStream(res) {
  const text = await res.text();
  const events = [];
  const comments = [];
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    if (!block) continue;
    let id = null;
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) comments.push(line.slice(1).trim());
      else if (line.startsWith('id:')) id = line.slice(3).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (data.length) events.push({ id, event: JSON.parse(data.join('\n')) });
  }
  return { events, comments, text };
}

const runInput = (threadId, extra = {}) => ({
  threadId, runId: 'r1', state: {}, messages: [{ id: 'u1', role: 'user', content: 'go' }], tools: [], context: [], forwardedProps: {}, ...extra,
});
const post = (base, pathname, body, headers = {}) => fetch(new URL(pathname, base), {
  method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
});

test('demo server: a clean run is a valid AG-UI stream whose state events rebuild the agent state', { timeout: 30000 }, async (t) => {
  const s = await startServer({ port: 0, stepMs: 15, quiet: true, preset: 'clean' });
  t.after(() => s.close());
  const res = await post(s.url, '/agent', runInput('clean'));
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/event-stream/);
  const { events, comments } = await readStream(res);
  const types = events.map((e) => e.event.type);
  assert.equal(types[0], 'RUN_STARTED');
  assert.equal(types[1], 'STATE_SNAPSHOT');
  assert.equal(types[types.length - 1], 'RUN_FINISHED');
  assert.ok(comments.some((c) => /^hb \d+$/.test(c)), 'heartbeats carry the seq');

  // Text messages: START, CONTENT..., END per messageId, in order.
  const open = new Set();
  for (const { event } of events) {
    if (event.type === 'TEXT_MESSAGE_START') { assert.equal(event.role, 'assistant'); open.add(event.messageId); }
    if (event.type === 'TEXT_MESSAGE_CONTENT') { assert.ok(open.has(event.messageId)); assert.equal(typeof event.delta, 'string'); assert.ok(event.delta.length > 0); }
    if (event.type === 'TEXT_MESSAGE_END') { assert.ok(open.delete(event.messageId)); }
  }
  assert.equal(open.size, 0);

  // State: a snapshot at seq 0, then contiguous deltas; applying them gives the agent's state.
  let state;
  let seq = null;
  const recipients = [];
  for (const { id, event } of events) {
    if (event.type === 'STATE_SNAPSHOT') { state = event.snapshot; seq = event.metadata['agui-state-sync'].seq; assert.equal(id, String(seq)); }
    if (event.type === 'STATE_DELTA') {
      assert.equal(event.metadata['agui-state-sync'].baseSeq, seq);
      assert.equal(event.metadata['agui-state-sync'].seq, seq + 1);
      assert.equal(id, String(event.metadata['agui-state-sync'].seq));
      seq = event.metadata['agui-state-sync'].seq;
      state = applyPatch(state, event.delta, true, false).newDocument;
      if (state.proposal && recipients[recipients.length - 1] !== state.proposal.recipient) recipients.push(state.proposal.recipient);
    }
  }
  assert.ok(recipients.length >= 2, `the agent revises the payee mid-run: ${recipients}`);
  assert.ok(state.document.sections.length >= 3 && state.todos.length >= 5 && state.budget.lines.length >= 4);
  assert.ok(events.some(({ event }) => event.type === 'STATE_DELTA' && event.delta.some((op) => op.op === 'test' && op.path.startsWith('/proposal'))),
    'overwrites of the proposal are guarded with test ops');

  const truth = await (await fetch(new URL('/truth?threadId=clean', s.url))).json();
  assert.equal(truth.seq, seq);
  assert.equal(truth.digest, stateDigest(state));
  assert.equal(truth.finished, true);

  const fin = events[events.length - 1].event;
  assert.deepEqual(Object.keys(fin).sort(), ['outcome', 'runId', 'threadId', 'type']);
  assert.equal(fin.threadId, 'clean');
  assert.equal(fin.outcome.type, 'interrupt');
  assert.equal(fin.outcome.interrupts.length, 1);
  assert.equal(fin.outcome.interrupts[0].reason, 'approval');
  assert.equal(typeof fin.outcome.interrupts[0].id, 'string');
  assert.equal(typeof fin.outcome.interrupts[0].message, 'string');

  // A client that reconnects with lastSeq catches up to the same state.
  const at10 = (() => {
    let st;
    for (const { event } of events) {
      if (event.type === 'STATE_SNAPSHOT') st = event.snapshot;
      if (event.type === 'STATE_DELTA' && event.metadata['agui-state-sync'].seq <= 10) st = applyPatch(st, event.delta, true, false).newDocument;
    }
    return st;
  })();
  for (const how of ['forwardedProps', 'Last-Event-ID']) {
    const again = how === 'forwardedProps'
      ? await post(s.url, '/agent', runInput('clean', { forwardedProps: { stateSync: { lastSeq: 10 } } }))
      : await post(s.url, '/agent', runInput('clean'), { 'Last-Event-ID': '10' });
    const r = await readStream(again);
    let st = at10;
    for (const { event } of r.events) {
      if (event.type === 'STATE_SNAPSHOT') st = event.snapshot;
      if (event.type === 'STATE_DELTA') st = applyPatch(st, event.delta, true, false).newDocument;
    }
    // Without an epoch the server can't tell which incarnation seq 10 belongs to,
    // so Last-Event-ID alone is answered with a snapshot (docs/wire.md section 3).
    const expected = how === 'Last-Event-ID' ? /^catch-up snapshot \d+ since -$/ : /^catch-up (replay|snapshot) \d+ since 10$/;
    assert.ok(r.comments.some((c) => expected.test(c)), `${how}: ${r.comments}`);
    assert.equal(stateDigest(st), truth.digest, `${how}: the catch-up rebuilds the agent state`);
    assert.equal(r.events[r.events.length - 1].event.type, 'RUN_FINISHED');
  }

  // With its epoch (as connectStateSync sends it) a client that missed a few
  // deltas gets exactly those, as first sent.
  const epoch = events.find(({ event }) => event.type === 'STATE_DELTA').event.metadata['agui-state-sync'].epoch;
  assert.equal(typeof epoch, 'string');
  const resumed = await post(s.url, '/agent', runInput('clean'), { 'X-AGUI-State-Seq': String(seq - 2), 'X-AGUI-State-Epoch': epoch });
  assert.equal(resumed.headers.get('x-agui-state-sync'), 'replay');
  const replay = (await readStream(resumed)).events.filter(({ event }) => event.type.startsWith('STATE_'));
  assert.deepEqual(replay.map(({ event }) => [event.type, event.metadata['agui-state-sync'].seq]), [['STATE_DELTA', seq - 1], ['STATE_DELTA', seq]]);
  const upToDate = await post(s.url, '/agent', runInput('clean'), { 'X-AGUI-State-Seq': String(seq), 'X-AGUI-State-Epoch': epoch });
  assert.equal(upToDate.headers.get('x-agui-state-sync'), 'current');
  await upToDate.text();

  // Approvals are checked against the agent's own state.
  const approval = { path: '/proposal', seq, digest: stateDigest(state.proposal) };
  const good = await (await post(s.url, '/approve', { threadId: 'clean', pane: 'sync', approval })).json();
  assert.equal(good.matched, true);
  assert.equal(good.executed, true);
  // The same approval again (a retry after a cut): the first decision, the payment not made twice.
  const again = await (await post(s.url, '/approve', { threadId: 'clean', pane: 'sync', approval })).json();
  assert.deepEqual([again.matched, again.executed, again.replayed, again.effectKey], [true, false, true, good.effectKey]);
  const stale = { ...state.proposal, recipient: recipients[0] };
  const bad = await (await post(s.url, '/approve', { threadId: 'clean', pane: 'reference', approval: { path: '/proposal', seq: null, digest: stateDigest(stale) } })).json();
  assert.equal(bad.matched, false);
  assert.equal(bad.agentValue.recipient, state.proposal.recipient);
});

test('demo server: the fault schedule is a pure function of the seed', { timeout: 30000 }, async (t) => {
  const cfg = normalizeFaults({ seed: 5, drop: 0.2, duplicate: 0.2, reorder: 0.2 });
  const fates = (c) => Array.from({ length: 200 }, (_, i) => fate(c, `s${i}`, 0));
  assert.deepEqual(fates(cfg), fates(normalizeFaults({ seed: 5, drop: 0.2, duplicate: 0.2, reorder: 0.2 })));
  assert.notDeepEqual(fates(cfg), fates(normalizeFaults({ seed: 6, drop: 0.2, duplicate: 0.2, reorder: 0.2 })));
  const counts = fates(cfg).reduce((a, f) => ({ ...a, [f]: (a[f] || 0) + 1 }), {});
  for (const k of ['drop', 'duplicate', 'reorder', 'pass']) assert.ok(counts[k] > 10, JSON.stringify(counts));

  // Two whole runs with the same seed see the same faults.
  const s = await startServer({ port: 0, stepMs: 10, quiet: true, seed: 9, drop: 0.15, duplicate: 0.15, reorder: 0.15 });
  t.after(() => s.close());
  const logs = [];
  for (const id of ['a', 'b']) {
    await readStream(await post(s.url, '/agent', runInput(id)));
    const truth = await (await fetch(new URL(`/truth?threadId=${id}`, s.url))).json();
    logs.push(truth.faults.map((f) => `${f.key}#${f.delivery}:${f.fate}`));
  }
  assert.ok(logs[0].length > 5);
  assert.deepEqual(logs[0], logs[1]);
});

test('demo server: the injector cuts connections and the outage delays reconnects', { timeout: 30000 }, async (t) => {
  const s = await startServer({ port: 0, stepMs: 40, quiet: true, disconnectEverySec: 0.5, outageMs: 400 });
  t.after(() => s.close());
  const t0 = Date.now();
  const res = await post(s.url, '/agent', runInput('cut'));
  await res.text().catch(() => '');
  const cutAfter = Date.now() - t0;
  // Ended by the injector (its count says so), and not before its 0.5 s: a lower bound, which a slow machine
  // cannot break. (An upper bound on the time would only measure the machine.)
  assert.ok(cutAfter >= 400, `cut after ${cutAfter} ms`);
  const cut = await (await fetch(new URL('/truth?threadId=cut', s.url))).json();
  assert.ok(cut.stats.cuts >= 1, 'the first response ended by the injector\'s cut');
  const again = await post(s.url, '/agent', runInput('cut', { forwardedProps: { stateSync: { lastSeq: 0 } } }));
  assert.equal(again.status, 200);
  // Measured from t0, before the first request: the cut came at least 0.5 s after that connection opened, and
  // the reconnect is answered at least outageMs (0.4 s) after the cut. (From when this client saw the cut, as
  // before, a loaded machine shortens the time measured and fails a server that did wait.)
  const answeredAfter = Date.now() - t0;
  assert.ok(answeredAfter >= 500 + 400, `the reconnect waited out the outage: answered ${answeredAfter} ms after the first request`);
  await again.text().catch(() => '');
  const truth = await (await fetch(new URL('/truth?threadId=cut', s.url))).json();
  assert.ok(truth.stats.cuts >= 2);
});

test('demo server: edits in the next run are judged by applyEdits, acknowledged in metadata.acks, and applied once', { timeout: 30000 }, async (t) => {
  const { AGENT_LIMIT, EDIT_POLICY } = await import(path.join(DEMO, 'src', 'edit-policy.js'));
  const s = await startServer({ port: 0, stepMs: 10, quiet: true, preset: 'clean' });
  t.after(() => s.close());
  const first = await readStream(await post(s.url, '/agent', runInput('edits', { runId: 'r1' })));
  const deltas = first.events.map((e) => e.event).filter((e) => e.type === 'STATE_DELTA');
  const agentWrite = deltas.find((e) => e.delta.some((op) => op.path === '/budget/limit'));
  assert.ok(agentWrite, 'the scripted agent writes the budget limit midway');
  assert.deepEqual(agentWrite.delta.filter((op) => op.path === '/budget/limit').map((op) => op.value), [AGENT_LIMIT]);
  const { seq, epoch } = deltas[deltas.length - 1].metadata['agui-state-sync'];
  const serverRunId = first.events[0].event.runId;

  // Made before the agent's write (baseSeq), on a shared path: a conflict the user wins.
  const edits = [
    { editId: 'c:1', baseSeq: agentWrite.metadata['agui-state-sync'].seq - 1, ops: [{ op: 'replace', path: '/budget/limit', value: 18000 }] },
    { editId: 'c:2', baseSeq: seq, ops: [{ op: 'replace', path: '/proposal/recipient', value: 'Mallory Ltd' }] },
  ];
  assert.equal(EDIT_POLICY.onConflict, 'user-wins');
  const next = (runId, at) => runInput('edits', { runId, forwardedProps: { stateSync: { lastSeq: at, epoch, edits } } });
  const second = await readStream(await post(s.url, '/agent', next('r2', seq)));
  const types = second.events.map((e) => e.event.type);
  assert.equal(types[0], 'RUN_STARTED');
  assert.notEqual(second.events[0].event.runId, serverRunId, 'a new client runId is a new run');
  const acked = second.events.map((e) => e.event).filter((e) => e.type === 'STATE_DELTA');
  assert.equal(acked.length, 1, types.join(' '));
  assert.equal(acked[0].metadata['agui-state-sync'].seq, seq + 1);
  assert.deepEqual(acked[0].delta, [{ op: 'replace', path: '/budget/limit', value: 18000 }]);
  assert.deepEqual(acked[0].metadata['agui-state-sync'].acks, [
    { editId: 'c:1', status: 'applied' },
    { editId: 'c:2', status: 'rejected', reason: 'agent-owned' },
  ]);
  assert.ok(types.includes('TEXT_MESSAGE_CONTENT'), 'the agent answers the run');
  const fin = second.events[second.events.length - 1].event;
  assert.equal(fin.type, 'RUN_FINISHED');
  assert.equal(fin.outcome.type, 'interrupt', 'the deposit still waits for approval');

  let truth = await (await fetch(new URL('/truth?threadId=edits', s.url))).json();
  assert.equal(truth.limit, 18000);
  assert.equal(truth.proposal.recipient, 'Lisboa Venues Lda');
  assert.deepEqual(truth.edits.map((r) => [r.editId, r.status]), [['c:1', 'applied'], ['c:2', 'rejected']]);

  // A reconnect re-sends the same edits: nothing applies twice; an empty delta
  // repeats the first verdicts (with the seq that carried them) for a client
  // that missed them.
  const again = await readStream(await post(s.url, '/agent', next('r2', seq + 1)));
  const repeat = again.events.map((e) => e.event).filter((e) => e.type.startsWith('STATE_'));
  assert.deepEqual(repeat.map((e) => e.delta), [[]]);
  assert.deepEqual(repeat[0].metadata['agui-state-sync'].acks.map((a) => [a.editId, a.status, a.seq]), [['c:1', 'applied', seq + 1], ['c:2', 'rejected', seq + 1]]);
  const unchanged = await (await fetch(new URL('/truth?threadId=edits', s.url))).json();
  assert.equal(unchanged.digest, truth.digest);
  assert.equal(unchanged.limit, 18000);

  // Once the approval is verified, the next run finishes without an interrupt.
  const good = await (await post(s.url, '/approve', { threadId: 'edits', pane: 'sync', approval: { path: '/proposal', seq: unchanged.seq, digest: stateDigest(unchanged.proposal) } })).json();
  assert.equal(good.matched, true);
  const third = await readStream(await post(s.url, '/agent', runInput('edits', { runId: 'r3', forwardedProps: { stateSync: { lastSeq: unchanged.seq, epoch } } })));
  const end = third.events[third.events.length - 1].event;
  assert.equal(end.type, 'RUN_FINISHED');
  assert.equal(end.outcome, undefined);
});

// Applies a stream's state events to `state` (a snapshot replaces it) as the
// reference handler would: the state a client of that stream ends with.
function applyStream(state, events) {
  let out = state;
  for (const { event } of events) {
    if (event.type === 'STATE_SNAPSHOT') out = structuredClone(event.snapshot);
    else if (event.type === 'STATE_DELTA') out = applyPatch(out, event.delta, true, false).newDocument;
  }
  return out;
}

test('demo server: the thread log has every run with its lineage; a parentRunId branches from that run\'s end state in a new epoch', { timeout: 60000 }, async (t) => {
  const { AGENT_LIMIT } = await import(path.join(DEMO, 'src', 'edit-policy.js'));
  const { compactEvents, listRuns, parseLog, replayEquivalent, stateAt } = await import(path.join(ROOT, 'js', 'src', 'log.js'));
  const { assertAguiEvents } = await import(path.join(ROOT, 'tests', 'js', 'log-support.mjs'));
  const s = await startServer({ port: 0, stepMs: 10, quiet: true, preset: 'clean' });
  t.after(() => s.close());
  const getJson = async (p) => (await fetch(new URL(p, s.url))).json();
  const readLog = async () => {
    const res = await fetch(new URL('/log?threadId=tt', s.url));
    assert.match(res.headers.get('content-type'), /^application\/jsonl/);
    return parseLog(await res.text());
  };

  // r1, then a follow-up r2 with the user's limit (made after the agent's own write).
  const first = await readStream(await post(s.url, '/agent', runInput('tt', { runId: 'r1' })));
  assert.deepEqual(first.events[0].event, { type: 'RUN_STARTED', threadId: 'tt', runId: 'r1' }, 'RUN_STARTED echoes the client\'s runId');
  const r1State = applyStream({}, first.events);
  const { seq, epoch } = first.events.findLast((e) => e.event.type === 'STATE_DELTA').event.metadata['agui-state-sync'];
  const edit = { editId: 'c:1', baseSeq: seq, ops: [{ op: 'replace', path: '/budget/limit', value: 18000 }] };
  const second = await readStream(await post(s.url, '/agent', runInput('tt', { runId: 'r2', forwardedProps: { stateSync: { lastSeq: seq, epoch, edits: [edit] } } })));
  const r2State = applyStream(r1State, second.events);
  assert.equal(r2State.budget.limit, 18000);
  let log = await readLog();
  assertAguiEvents(log, 'the thread log');
  assert.deepEqual(listRuns(log).map((r) => [r.runId, r.parentRunId, r.branched, r.status]), [['r1', null, false, 'finished'], ['r2', 'r1', false, 'finished']]);

  // Refused without a stream: a parent the thread never had.
  const unknown = await post(s.url, '/agent', runInput('tt', { runId: 'r9', parentRunId: 'nope' }));
  assert.equal(unknown.status, 400);
  assert.match((await unknown.json()).error, /parentRunId "nope"/);

  // r3 branches from r1: the client (at r2's end) gets r3's RUN_STARTED with
  // its parent, then a snapshot of a new epoch; edits sent with a branch are left out.
  const at = second.events.findLast((e) => e.event.type === 'STATE_DELTA').event.metadata['agui-state-sync'].seq;
  const stray = { editId: 'c:2', baseSeq: at, ops: [{ op: 'replace', path: '/budget/limit', value: 1 }] };
  const branchRes = await post(s.url, '/agent', runInput('tt', { runId: 'r3', parentRunId: 'r1', forwardedProps: { stateSync: { lastSeq: at, epoch, edits: [stray] } } }));
  assert.equal(branchRes.status, 200);
  // While r3 is going, another branch is refused.
  const busy = await post(s.url, '/agent', runInput('tt', { runId: 'r4', parentRunId: 'r2' }));
  assert.equal(busy.status, 409);
  await busy.text();
  const third = await readStream(branchRes);
  assert.deepEqual(third.events[0].event, { type: 'RUN_STARTED', threadId: 'tt', runId: 'r3', parentRunId: 'r1' });
  const snapshot = third.events[1].event;
  assert.equal(snapshot.type, 'STATE_SNAPSHOT', 'another epoch: the catch-up is a snapshot');
  assert.notEqual(snapshot.metadata['agui-state-sync'].epoch, epoch);
  assert.equal(snapshot.snapshot.budget.limit, AGENT_LIMIT, 'r1\'s end state: the agent\'s limit, not r2\'s edit');
  const r3State = applyStream({}, third.events);
  assert.equal(r3State.budget.lines.find((l) => /^Guesthouse/.test(l.item)).amount, 3120);
  assert.ok(r3State.todos.some((td) => /Compare this branch/.test(td.text)));
  const truth = await getJson('/truth?threadId=tt');
  assert.equal(truth.digest, stateDigest(r3State), 'the branch\'s client state is the agent\'s');
  assert.equal(truth.limit, AGENT_LIMIT);
  assert.ok(!truth.edits.some((r) => r.editId === 'c:2'), 'the branch left the stray edit out');

  // The log: the tree, and what a replay of it says at each run's end is what the agent recorded there.
  log = await readLog();
  assertAguiEvents(log, 'the thread log');
  const runs = listRuns(log);
  assert.deepEqual(runs.map((r) => [r.runId, r.parentRunId, r.branched, r.depth]), [['r1', null, false, 0], ['r2', 'r1', false, 1], ['r3', 'r1', true, 1]]);
  assert.deepEqual(truth.runs.map((r) => [r.runId, r.parentRunId]), [['r1', null], ['r2', null], ['r3', 'r1']]);
  const expected = { r1: r1State, r2: r2State, r3: r3State };
  for (const { runId, ended } of truth.runs) {
    const replayed = await stateAt(log, { runId });
    assert.equal(stateDigest(replayed), ended.digest, `stateAt ${runId} is where the agent ended it`);
    assert.equal(stateDigest(replayed), stateDigest(expected[runId]), `stateAt ${runId} is what its client ended with`);
  }
  assert.equal((await stateAt(log, { seq: 0, epoch: snapshot.metadata['agui-state-sync'].epoch })).budget.limit, AGENT_LIMIT);
  // Appending: the log from an index on is the rest of it.
  const tail = await fetch(new URL('/log?threadId=tt&from=5', s.url));
  assert.equal(tail.headers.get('x-log-length'), String(log.length));
  assert.deepEqual([...log.slice(0, 5), ...parseLog(await tail.text())], log);
  assert.equal((await fetch(new URL('/log?threadId=tt&from=-1', s.url))).status, 400);
  const compacted = await compactEvents(log);
  assert.ok(compacted.length < log.length / 2, `${compacted.length} of ${log.length} events`);
  assert.deepEqual(await replayEquivalent(log, compacted), { equal: true, firstDifference: null });
});
