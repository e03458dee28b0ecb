// User edits through sequenceState() (docs/wire.md section 9): the middleware
// judges forwardedProps.stateSync.edits with the thread's emitter before the
// wrapped agent runs, the agent (form-agent.mjs, an @ag-ui/client
// AbstractAgent that knows nothing about us) runs on the merged state, and
// the verdicts reach the client in its catch-up. In process, and over HTTP
// with a createStateSync + connectStateSync client.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { startSequencedServer } from './ag-ui-support.mjs';
import { FormAgent, gate } from './form-agent.mjs';
import { connectClient, runInput, until } from './proxy-support.mjs';
import { jsDir, pkg, plain } from './support.mjs';

const { sequenceState } = await import(join(jsDir, 'src', 'ag-ui.js'));
const { AguiSyncError } = pkg;
const T = { timeout: 20000 };

const FORM = { brief: 'Plan the team offsite in May. '.repeat(40), form: { name: 'Ada', note: '' }, venue: 'Lisbon', proposal: { amount: 100 }, tags: [] };

const edit = (editId, baseSeq, ops) => ({ editId, baseSeq, ops });
const replace = (path, value) => ({ op: 'replace', path, value });

function collect(middleware, agent, input) {
  const events = [];
  return new Promise((resolve, reject) => {
    middleware.run(input, agent).subscribe({ next: (e) => events.push(e), error: reject, complete: () => resolve(events) });
  });
}

const acksIn = (events) => events.flatMap((e) => e.metadata?.['agui-state-sync']?.acks ?? []);
function verdict(events, editId) {
  const found = acksIn(events).filter((a) => a.editId === editId).at(-1);
  if (found === undefined) return undefined;
  const { seq, ...rest } = found;
  return rest;
}

/** The thread's first run: the client starts from FORM and gets a snapshot. Returns { seq, epoch }. */
async function firstRun(middleware, agent, threadId) {
  await collect(middleware, agent, runInput(threadId, `${threadId}-r1`, { state: FORM, forwardedProps: { stateSync: { lastSeq: null } } }));
  const emitter = middleware.emitterFor(threadId);
  return { seq: emitter.seq, epoch: emitter.epoch };
}

describe('sequenceState(): edits', () => {
  test('the agent runs on the merged state, without the edits; the verdicts come in the catch-up', T, async () => {
    const middleware = sequenceState({ edits: { ownership: { '/proposal': 'agent' } } });
    const agent = new FormAgent((input, index) => (index === 1 ? [{ ops: [replace('/venue', 'Porto')] }] : []));
    const { seq, epoch } = await firstRun(middleware, agent, 'A');
    // The client's `state` is its confirmed state: the merge is the middleware's.
    const events = await collect(middleware, agent, runInput('A', 'A-r2', {
      state: FORM,
      forwardedProps: { keep: 1, stateSync: { lastSeq: seq, epoch, edits: [edit('c1:1', seq, [replace('/form/note', 'window seat')]), edit('c1:2', seq, [replace('/proposal/amount', 1)])] } },
    }));
    const merged = { ...FORM, form: { name: 'Ada', note: 'window seat' } };
    assert.deepEqual(agent.inputs[1].state, merged);
    assert.deepEqual(agent.inputs[1].forwardedProps, { keep: 1, stateSync: { lastSeq: seq, epoch } }, 'the edits are not passed on');
    assert.equal(events[0].type, 'RUN_STARTED');
    assert.equal(events[1].metadata['agui-state-sync'].seq, seq + 1, 'the verdicts right after RUN_STARTED');
    assert.deepEqual(verdict(events, 'c1:1'), { editId: 'c1:1', status: 'applied' });
    assert.deepEqual(verdict(events, 'c1:2'), { editId: 'c1:2', status: 'rejected', reason: 'agent-owned' });
    const seqs = events.filter((e) => e.metadata?.['agui-state-sync']?.seq !== undefined).map((e) => e.metadata['agui-state-sync'].seq);
    assert.deepEqual(seqs, [seq + 1, seq + 2], 'the acks, then the agent\'s write (its unchanged snapshot is not sent)');
    assert.deepEqual(middleware.emitterFor('A').state, { ...merged, venue: 'Porto' });
    middleware.dispose();
  });

  test('a conflict under agent-wins, none under user-wins; a re-sent edit applies once', T, async () => {
    for (const onConflict of ['agent-wins', 'user-wins']) {
      const middleware = sequenceState({ edits: { onConflict } });
      const agent = new FormAgent((input, index) => (index === 1 ? [{ ops: [replace('/venue', 'Porto')] }] : []));
      const { seq, epoch } = await firstRun(middleware, agent, 'B');
      await collect(middleware, agent, runInput('B', 'B-other', { state: middleware.emitterFor('B').state })); // another client's run
      const late = [edit('c1:1', seq, [replace('/venue', 'Faro')]), edit('c1:2', seq, [{ op: 'add', path: '/tags/-', value: 'x' }])];
      const input = (runId) => runInput('B', runId, { state: FORM, forwardedProps: { stateSync: { lastSeq: seq, epoch, edits: late } } });
      const first = await collect(middleware, agent, input('B-r3'));
      const again = await collect(middleware, agent, input('B-r4'));
      const expected = onConflict === 'agent-wins' ? { editId: 'c1:1', status: 'rejected', reason: 'conflict' } : { editId: 'c1:1', status: 'applied' };
      assert.deepEqual(verdict(first, 'c1:1'), expected, onConflict);
      assert.deepEqual(verdict(again, 'c1:1'), expected, `${onConflict}: the same verdict again`);
      assert.equal(verdict(again, 'c1:2').status, 'applied');
      assert.deepEqual(agent.inputs[3].state.tags, ['x'], `${onConflict}: applied once`);
      assert.equal(agent.inputs[3].state.venue, onConflict === 'agent-wins' ? 'Porto' : 'Faro');
      middleware.dispose();
    }
  });

  test('a snapshot from a run that started before another client\'s edit changes only what the agent changed', T, async () => {
    const hold = gate();
    const middleware = sequenceState();
    const agent = new FormAgent((input, index) => (index === 1
      ? [{ ops: [replace('/venue', 'Porto')], snapshot: true }, { ops: [replace('/form/name', 'Grace')], gate: hold.promise, snapshot: true }]
      : []));
    const { seq, epoch } = await firstRun(middleware, agent, 'R');
    const older = collect(middleware, agent, runInput('R', 'R-older', { state: FORM }));
    await until(() => middleware.emitterFor('R').state.venue === 'Porto', 'the older run to be under way');
    const now = middleware.emitterFor('R');
    const edits = [edit('c2:1', now.seq, [replace('/form/note', 'mine')])];
    const events = await collect(middleware, agent, runInput('R', 'R-edit', { state: now.state, forwardedProps: { stateSync: { lastSeq: now.seq, epoch, edits } } }));
    assert.deepEqual(verdict(events, 'c2:1'), { editId: 'c2:1', status: 'applied' });
    hold.open();
    const stamped = await older;
    // Its snapshot says note: '' (it never saw the edit); it wrote only the name.
    assert.deepEqual(middleware.emitterFor('R').state.form, { name: 'Grace', note: 'mine' });
    const after = stamped.filter((e) => e.metadata?.['agui-state-sync']?.seq > seq + 1);
    assert.ok(after.every((e) => e.type !== 'STATE_DELTA' || e.delta.every((op) => op.path !== '/form/note')), JSON.stringify(after.map((e) => e.delta)));
    middleware.dispose();
  });

  test('a thread it has no state of starts from the client\'s state, edits unjudged', T, async () => {
    const middleware = sequenceState();
    const agent = new FormAgent();
    const state = { ...FORM, form: { name: 'Ada', note: 'typed first' } };
    const events = await collect(middleware, agent, runInput('C', 'C-r1', { state, forwardedProps: { stateSync: { lastSeq: null, edits: [edit('c1:1', null, [replace('/form/note', 'typed first')])] } } }));
    assert.deepEqual(agent.inputs[0].state, state);
    assert.equal(agent.inputs[0].forwardedProps.stateSync.edits, undefined);
    assert.deepEqual(acksIn(events), []);
    assert.deepEqual(middleware.emitterFor('C').state, state);
    middleware.dispose();
  });

  test('hostile edits: an invalid-request error (status 400) before any thread or run', T, async () => {
    const middleware = sequenceState();
    const agent = new FormAgent();
    for (const edits of [{}, [1], [edit('', 0, [])], [edit('c1:1', 0, {})], Array.from({ length: 1025 }, (_, i) => edit(`c:${i}`, 0, []))]) {
      await assert.rejects(collect(middleware, agent, runInput('D', 'D-r', { forwardedProps: { stateSync: { edits } } })),
        (error) => error instanceof AguiSyncError && error.code === 'invalid-request' && error.status === 400);
    }
    assert.equal(middleware.threads, 0);
    assert.equal(agent.inputs.length, 0);
    assert.throws(() => sequenceState({ edits: { onConflict: 'first-wins' } }), { code: 'invalid-options' });
    assert.throws(() => sequenceState({ edits: { ownership: { x: 'agent' } } }), { code: 'invalid-options' });
    middleware.dispose();
  });

  test('over HTTP: a connectStateSync client sends edits with its position and ends synced with them', T, async () => {
    const middleware = sequenceState({ edits: { ownership: { '/proposal': 'agent' } } });
    const agent = new FormAgent((input, index) => (index === 1 ? [{ ops: [replace('/venue', 'Porto')] }] : []));
    const server = await startSequencedServer(middleware, agent);
    try {
      const first = await connectClient(server.url, runInput('E', 'E-r1', { state: FORM }));
      await first.done;
      assert.equal(first.sync.status, 'synced');
      const base = first.sync.lastSeq;
      const edits = [edit('c1:1', base, [replace('/form/note', 'window seat')]), edit('c1:2', base, [replace('/proposal/amount', 1)])];
      const second = await connectClient(server.url, runInput('E', 'E-r2', { state: plain(first.sync.state), forwardedProps: { stateSync: { edits } } }), { sync: first.sync });
      await second.done;
      assert.equal(second.sync.status, 'synced');
      assert.deepEqual(plain(second.sync.state), { ...FORM, form: { name: 'Ada', note: 'window seat' }, venue: 'Porto' });
      const events = second.outcomes.filter((o) => o.kind === 'applied').map((o) => o.event);
      assert.deepEqual(verdict(events, 'c1:1'), { editId: 'c1:1', status: 'applied' });
      assert.deepEqual(verdict(events, 'c1:2'), { editId: 'c1:2', status: 'rejected', reason: 'agent-owned' });

      // The same with the client API: sync.edit() and sync.runInput().
      const { sync } = second;
      const mine = sync.edit([{ op: 'add', path: '/tags/-', value: 'aisle' }]);
      const third = await connectClient(server.url, { ...runInput('E', 'E-r3'), ...sync.runInput() }, { sync });
      await third.done;
      assert.deepEqual(third.outcomes.filter((o) => o.editId === mine.editId).map((o) => o.kind), ['edit-acked']);
      assert.deepEqual(sync.pendingEdits(), []);
      assert.deepEqual(plain(sync.confirmedState).tags, ['aisle']);
      assert.deepEqual(agent.inputs[2].state.tags, ['aisle'], 'the agent ran on it');
    } finally {
      await server.close();
      middleware.dispose();
    }
  });
});
