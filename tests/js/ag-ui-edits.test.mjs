// The lost edit, with the real @ag-ui/client 1.x over real HTTP SSE (issue 14):
// a user edits a field while a run is going, and the agent writes the same
// field mid-run.
//  - A plain HttpAgent with setState(): the agent's next state event
//    overwrites the edit; it never reaches the agent either.
//  - StateSyncHttpAgent with agent.edit(): the edit stays visible (masked on a
//    user-owned path; a conflict the app hears of on a shared one, resolved by
//    onConflict), travels in the next run's forwardedProps.stateSync.edits,
//    and the server judges it with emitter.applyEdits: acknowledged, and the
//    agent holds the user's value.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { HttpAgent } from '@ag-ui/client';
import { join } from 'node:path';
import { sseHead, startServer } from './ag-ui-support.mjs';
import { jsDir, pkg, plain } from './support.mjs';

const { StateSyncHttpAgent } = await import(join(jsDir, 'src', 'ag-ui.js'));
const { AppliedStates } = await import(join(jsDir, 'src', 'ag-ui', 'agent-delivery.js'));
const { catchUp } = await import(join(jsDir, 'src', 'server.js'));
const { createStateEmitter } = pkg;

const T = { timeout: 30000 };
const INITIAL = { form: { note: 'draft' }, budget: 100, plan: 'offsite' };
const POLICY = { ownership: { '/form': 'user', '/plan': 'agent' } };
const closers = [];
after(async () => {
  for (const close of closers.splice(0)) await close();
});

const started = (input) => ({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
const finished = (input) => ({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });

/** A promise and its resolve function. */
function deferred() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}

/**
 * A run's first state reached the app: the user edits now (`edit()`), then the
 * agent's write goes out. Resolves when the edit is done.
 */
function midRun(edit) {
  const edited = deferred();
  let done = false;
  const subscriber = {
    onStateChanged: () => {
      if (done) return;
      done = true;
      queueMicrotask(() => {
        edit();
        edited.resolve();
      });
    },
  };
  return { subscriber, edited: edited.promise };
}

// The AG-UI docs' agent: each run starts from RunAgentInput.state, announces it
// with a STATE_SNAPSHOT, and, once the user has edited, writes `path` (a JSON
// Patch delta). It knows nothing of edits.
async function plainServer(path, value, edited) {
  const server = await startServer(async ({ input, res, encoder, index }) => {
    sseHead(res, encoder);
    res.write(encoder.encode(started(input)));
    res.write(encoder.encode({ type: 'STATE_SNAPSHOT', snapshot: input.state }));
    if (index === 0) {
      await edited();
      res.write(encoder.encode({ type: 'STATE_DELTA', delta: [{ op: 'replace', path, value }] }));
    }
    res.end(encoder.encode(finished(input)));
  });
  closers.push(server.close);
  return server;
}

// The same agent behind an agui-state-sync server: one StateEmitter per thread;
// a run catches the client up (catchUp), judges forwardedProps.stateSync.edits
// with emitter.applyEdits (the acks ride on the events), and in its first run
// writes `path` once the user has edited.
async function syncServer(path, value, edited, policy) {
  const emitter = await createStateEmitter({ initialState: INITIAL, snapshotRatio: 100 });
  const verdicts = [];
  const server = await startServer(async ({ input, res, encoder, index }) => {
    sseHead(res, encoder);
    const send = (events) => res.write(events.map((event) => emitter.encode(event)).join(''));
    res.write(encoder.encode(started(input)));
    send(catchUp(emitter, input).events);
    const edits = input.forwardedProps?.stateSync?.edits;
    if (edits) {
      const { events, results } = emitter.applyEdits(edits, policy);
      verdicts.push(...results);
      send(events);
    }
    if (index === 0) {
      await edited();
      send(emitter.patch([{ op: 'replace', path, value }]));
    }
    res.end(encoder.encode(finished(input)));
  });
  closers.push(server.close);
  closers.push(async () => emitter.dispose());
  return { ...server, emitter, verdicts };
}

describe('a plain HttpAgent loses an edit made during a run', () => {
  test('setState() mid-run is overwritten by the agent\'s next state event, and never reaches the agent', T, async () => {
    let edited;
    const server = await plainServer('/form/note', 'agent wrote this', () => edited);
    const agent = new HttpAgent({ url: server.url, threadId: 't', initialState: INITIAL });
    const seen = [];
    agent.subscribe({ onStateChanged: ({ state }) => seen.push(state.form.note) });
    const mid = midRun(() => agent.setState({ ...agent.state, form: { note: 'user typed this' } }));
    edited = mid.edited;
    await agent.runAgent({ runId: 'r1' }, mid.subscriber);
    assert.ok(seen.includes('user typed this'), 'the user saw their edit for a moment');
    assert.equal(agent.state.form.note, 'agent wrote this', 'then the agent\'s write replaced it');
    await agent.runAgent({ runId: 'r2' });
    assert.equal(server.requests[1].input.state.form.note, 'agent wrote this', 'the next run never tells the agent');
    assert.ok(!JSON.stringify(server.requests.map((r) => r.input)).includes('user typed this'), 'the edit is gone for good');
    assert.equal(agent.state.form.note, 'agent wrote this');
  });

  test('the same on a field both write: the last writer wins, nobody is told', T, async () => {
    let edited;
    const server = await plainServer('/budget', 80, () => edited);
    const agent = new HttpAgent({ url: server.url, threadId: 't', initialState: INITIAL });
    const mid = midRun(() => agent.setState({ ...agent.state, budget: 150 }));
    edited = mid.edited;
    await agent.runAgent({ runId: 'r1' }, mid.subscriber);
    assert.equal(agent.state.budget, 80);
  });
});

describe('StateSyncHttpAgent keeps it', () => {
  async function syncAgent(url, stateSync) {
    const outcomes = [];
    const agent = new StateSyncHttpAgent({
      url, threadId: 't', initialState: INITIAL,
      stateSync: { ...POLICY, clientId: 'tab', backoff: { initialMs: 2, maxMs: 20, jitter: 0 }, onOutcome: (o) => outcomes.push(o), ...stateSync },
    });
    await agent.ready;
    return { agent, outcomes };
  }

  test('a user-owned field: masked while pending, acknowledged on the next run, held by the agent', T, async () => {
    let edited;
    const server = await syncServer('/form/note', 'agent wrote this', () => edited, POLICY);
    const { agent, outcomes } = await syncAgent(server.url);
    const notes = [];
    agent.subscribe({ onStateChanged: ({ state }) => notes.push(state.form.note) });
    let editId;
    const mid = midRun(() => {
      const r = agent.edit([{ op: 'replace', path: '/form/note', value: 'user typed this' }]);
      assert.ok(r.ok);
      editId = r.editId;
      assert.equal(agent.state.form.note, 'user typed this', 'agent.state shows it at once');
      assert.equal(agent.state, agent.stateSync.state);
    });
    edited = mid.edited;
    await agent.runAgent({ runId: 'r1' }, mid.subscriber);

    const sync = agent.stateSync;
    assert.equal(agent.state.form.note, 'user typed this', 'the agent\'s write is masked');
    assert.equal(sync.confirmedState.form.note, 'agent wrote this', 'but it is there, confirmed');
    assert.deepEqual(sync.pendingEdits().map((e) => e.editId), [editId]);
    assert.equal(outcomes.find((o) => o.kind === 'conflict'), undefined, 'a user-owned path: no conflict');
    const afterEdit = notes.slice(notes.indexOf('user typed this'));
    assert.ok(afterEdit.length > 1 && afterEdit.every((n) => n === 'user typed this'), `subscribers never saw it vanish: ${notes}`);

    await agent.runAgent({ runId: 'r2' });
    const input = server.requests[1].input;
    assert.deepEqual(plain(input.forwardedProps.stateSync.edits), [{ editId, baseSeq: 0, ops: [{ op: 'replace', path: '/form/note', value: 'user typed this' }] }]);
    assert.equal(input.state.form.note, 'user typed this', 'RunAgentInput.state is the visible state');
    assert.deepEqual(server.verdicts.map((v) => [v.editId, v.status]), [[editId, 'applied']]);
    assert.deepEqual(outcomes.filter((o) => o.kind === 'edit-acked').map((o) => o.editId), [editId]);
    assert.deepEqual(sync.pendingEdits(), []);
    assert.equal(server.emitter.state.form.note, 'user typed this', 'the agent holds the user\'s value');
    assert.deepEqual(plain(agent.state), server.emitter.state);
    assert.equal(agent.state, sync.state);
    assert.equal(sync.state, sync.confirmedState);
    assert.equal(sync.status, 'synced');
    assert.equal(server.requests[2], undefined, 'no extra request');
    agent.dispose();
  });

  test('a shared field under user-wins: a conflict the app hears of, with both values; the user\'s value is applied', T, async () => {
    let edited;
    const policy = { ...POLICY, onConflict: 'user-wins' };
    const server = await syncServer('/budget', 80, () => edited, policy);
    const { agent, outcomes } = await syncAgent(server.url, { onConflict: 'user-wins' });
    const mid = midRun(() => assert.ok(agent.edit([{ op: 'replace', path: '/budget', value: 150 }]).ok));
    edited = mid.edited;
    await agent.runAgent({ runId: 'r1' }, mid.subscriber);
    const conflict = outcomes.find((o) => o.kind === 'conflict');
    assert.deepEqual({ ...conflict, editId: undefined, seq: undefined }, {
      kind: 'conflict', editId: undefined, seq: undefined, path: '/budget', mine: 150, theirs: 80, resolution: 'user-wins',
    });
    assert.equal(agent.state.budget, 150);
    assert.equal(agent.stateSync.confirmedState.budget, 80);
    await agent.runAgent({ runId: 'r2' });
    assert.ok(outcomes.some((o) => o.kind === 'edit-acked' && o.editId === conflict.editId));
    assert.equal(server.emitter.state.budget, 150);
    assert.deepEqual(plain(agent.state), server.emitter.state);
    agent.dispose();
  });

  test('a shared field under agent-wins: the agent\'s value stands, and the app is told (never silently)', T, async () => {
    let edited;
    const server = await syncServer('/budget', 80, () => edited, POLICY);
    const { agent, outcomes } = await syncAgent(server.url);
    const mid = midRun(() => assert.ok(agent.edit([{ op: 'replace', path: '/budget', value: 150 }]).ok));
    edited = mid.edited;
    await agent.runAgent({ runId: 'r1' }, mid.subscriber);
    const conflict = outcomes.find((o) => o.kind === 'conflict');
    assert.equal(conflict?.resolution, 'agent-wins');
    assert.equal(conflict.mine, 150);
    assert.equal(conflict.theirs, 80);
    assert.equal(agent.state.budget, 80);
    assert.deepEqual(agent.stateSync.pendingEdits(), []);
    await agent.runAgent({ runId: 'r2' });
    assert.equal(server.requests[1].input.forwardedProps.stateSync.edits, undefined, 'nothing left to send');
    assert.equal(server.emitter.state.budget, 80);
    assert.deepEqual(plain(agent.state), server.emitter.state);
    agent.dispose();
  });

  test('an agent-owned field refuses the edit at once; forwardedProps of the app are kept', T, async () => {
    const server = await syncServer('/budget', 80, async () => {}, POLICY);
    const { agent } = await syncAgent(server.url);
    const r = agent.edit([{ op: 'replace', path: '/plan', value: 'party' }]);
    assert.deepEqual({ ok: r.ok, reason: r.reason, opIndex: r.opIndex }, { ok: false, reason: 'agent-owned', opIndex: 0 });
    assert.ok(agent.edit([{ op: 'replace', path: '/form/note', value: 'x' }]).ok);
    await agent.runAgent({ runId: 'r1', forwardedProps: { mine: 1 } });
    const props = server.requests[0].input.forwardedProps;
    assert.equal(props.mine, 1);
    assert.equal(props.stateSync.edits.length, 1);
    assert.equal(server.emitter.state.plan, 'offsite');
    agent.dispose();
  });

  test('edit() before the engine loaded throws not-loaded', () => {
    const agent = new StateSyncHttpAgent({ url: 'http://127.0.0.1:9/', stateSync: { clientId: 'x' } });
    assert.throws(() => agent.edit([]), (e) => e.code === 'not-loaded');
    agent.dispose();
  });
});

describe('AppliedStates: a state event the pipeline reaches after a local edit never takes the edit away', () => {
  test('the latest event stands for the current state; an earlier one leaves agent.state alone', () => {
    const applied = new AppliedStates();
    const [m1, m2, m3] = [{}, {}, {}];
    applied.register(m1, 's1');
    applied.register(m2, 's2');
    assert.deepEqual(applied.lookup({ metadata: m1 }), { found: true, state: 's1' }, 'no edit since: as registered');
    applied.noteLocalEdit('s2+edit');
    assert.deepEqual(applied.lookup({ metadata: m1 }), { found: true, state: undefined }, 'older than the edit: no move');
    assert.deepEqual(applied.lookup({ metadata: m2 }), { found: true, state: 's2+edit' }, 'the latest: the current state');
    applied.register(m3, 's3+edit');
    assert.deepEqual(applied.lookup({ metadata: m3 }), { found: true, state: 's3+edit' });
    assert.deepEqual(applied.lookup({ metadata: {} }), { found: false, state: 's3+edit' }, 'an event the engine never saw');
  });
});
