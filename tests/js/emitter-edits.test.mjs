// StateEmitter.applyEdits (docs/wire.md section 9) through the WASM emitter:
// the verdicts and their events, idempotency, the bounded histories, acks in
// snapshots, argument errors, and a seeded property test against an
// independent model of the rules (edit-oracle.mjs), every event also fed to a
// real receiver (createStateSync).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EditOracle, originOf } from './edit-oracle.mjs';
import { pkg, plain, rng } from './support.mjs';

const { AguiSyncError, createStateEmitter, createStateSync } = pkg;

const FORM = Object.freeze({ form: { name: 'Ada', note: '' }, venue: 'Lisbon', proposal: { amount: 100 }, tags: ['a', 'b'] });

const edit = (editId, baseSeq, ops) => ({ editId, baseSeq, ops });
const replace = (path, value) => ({ op: 'replace', path, value });

async function emitterAt(state = FORM, options = {}) {
  return createStateEmitter({ initialState: state, epoch: 'E', ...options });
}

/** The metadata.acks of `events`, per event. */
const acksOf = (events) => events.map((e) => e.metadata['agui-state-sync'].acks ?? []);

describe('emitter.applyEdits: verdicts', () => {
  test('an edit applies and its verdict rides in the event that carries its ops', async () => {
    const emitter = await emitterAt();
    const { events, results } = emitter.applyEdits([edit('c1:1', 0, [replace('/form/note', 'window seat')])]);
    assert.deepEqual(results, [{ editId: 'c1:1', status: 'applied', seq: 1 }]);
    assert.equal(events.length, 1);
    assert.equal(events[0].metadata['agui-state-sync'].seq, 1);
    assert.equal(emitter.seq, 1);
    assert.equal(emitter.state.form.note, 'window seat');
    assert.deepEqual(acksOf(events)[0].map(({ editId, status }) => ({ editId, status })), [{ editId: 'c1:1', status: 'applied' }]);
    emitter.dispose();
  });

  test('ownership: agent-owned paths, writes above them and array elements are refused; user-owned never conflict', async () => {
    const emitter = await emitterAt();
    emitter.patch([replace('/form/name', 'Grace'), replace('/tags/0', 'z')]); // seq 1: the agent writes the form and the array
    const policy = { ownership: { '/proposal': 'agent', '/form': 'user', '/tags/1': 'agent' } };
    const { results } = emitter.applyEdits([
      edit('c1:1', 0, [replace('/proposal/amount', 1)]), // agent-owned
      edit('c1:2', 0, [replace('', {})]), // above every agent-owned path
      edit('c1:3', 0, [replace('/tags/0', 'y')]), // an element: the whole array, which holds /tags/1
      edit('c1:4', 0, [replace('/form/name', 'Ann')]), // user-owned: the agent's write at seq 1 is no conflict
    ], policy);
    assert.deepEqual(results.map((r) => r.reason ?? r.status), ['agent-owned', 'agent-owned', 'agent-owned', 'applied']);
    assert.equal(emitter.state.form.name, 'Ann');
    assert.equal(emitter.state.proposal.amount, 100);
    emitter.dispose();
  });

  test('three-way check: under agent-wins a shared write conflicts only with overlapping writes since baseSeq', async () => {
    const emitter = await emitterAt();
    emitter.patch([replace('/venue', 'Porto')]); // seq 1
    const { results } = emitter.applyEdits([
      edit('c1:1', 0, [replace('/venue', 'Faro')]), // the agent wrote /venue since 0
      edit('c1:2', 1, [replace('/venue', 'Braga')]), // made after it: no conflict
      edit('c2:1', 0, [replace('/form/note', 'x')]), // nobody wrote /form/note
      edit('c3:1', 1, [replace('/venue', 'Evora')]), // c1 wrote /venue at seq 2, after c3's base
    ]);
    assert.deepEqual(results.map(({ editId, reason, status }) => [editId, reason ?? status]), [
      ['c1:1', 'conflict'], ['c1:2', 'applied'], ['c2:1', 'applied'], ['c3:1', 'conflict'],
    ]);
    assert.equal(emitter.state.venue, 'Braga');
    emitter.dispose();
  });

  test('under user-wins the same edits apply: nothing is rejected for a conflict', async () => {
    const emitter = await emitterAt();
    emitter.patch([replace('/venue', 'Porto')]);
    const { results } = emitter.applyEdits([edit('c1:1', 0, [replace('/venue', 'Faro')])], { onConflict: 'user-wins' });
    assert.deepEqual(results, [{ editId: 'c1:1', status: 'applied', seq: 2 }]);
    assert.equal(emitter.state.venue, 'Faro');
    emitter.dispose();
  });

  test('an edit whose ops fail is rejected with the patch code, atomically', async () => {
    const emitter = await emitterAt();
    const { results } = emitter.applyEdits([
      edit('c1:1', 0, [replace('/form/note', 'kept?'), { op: 'test', path: '/venue', value: 'Porto' }]),
      edit('c1:2', 0, [{ op: 'remove', path: '/tags/9' }]),
      edit('c1:3', 0, [{ op: 'frobnicate', path: '/venue' }]),
      edit('c1:4', 0, []),
    ]);
    assert.deepEqual(results.map((r) => r.reason), ['precondition-failed', 'patch-failed', 'invalid-patch', 'invalid-patch']);
    assert.deepEqual(plain(emitter.state), FORM, 'nothing of a rejected edit applied');
    emitter.dispose();
  });

  test('one event per editId origin, in first-seen order; the agent\'s own writes never carry acks', async () => {
    const emitter = await emitterAt({ ...FORM, filler: 'x'.repeat(2000) }); // deltas stay deltas
    const agent = emitter.patch([replace('/venue', 'Porto')]);
    const { events, results } = emitter.applyEdits([
      edit('c2:1', 1, [replace('/form/note', 'b')]),
      edit('c1:1', 1, [replace('/form/name', 'a')]),
      edit('c2:2', 1, [{ op: 'add', path: '/tags/-', value: 'c' }]),
    ]);
    assert.equal(agent[0].metadata['agui-state-sync'].acks, undefined);
    assert.deepEqual(events.map((e) => [e.type, e.metadata['agui-state-sync'].seq]), [['STATE_DELTA', 2], ['STATE_DELTA', 3]]);
    assert.deepEqual(acksOf(events).map((acks) => acks.map((a) => a.editId)), [['c2:1', 'c2:2'], ['c1:1']]);
    assert.deepEqual(events[0].delta, [replace('/form/note', 'b'), { op: 'add', path: '/tags/-', value: 'c' }]);
    // results come grouped like the events
    assert.deepEqual(results.map((r) => [r.editId, r.seq]), [['c2:1', 2], ['c2:2', 2], ['c1:1', 3]]);
    assert.equal(emitter.update({ ...emitter.state, venue: 'Faro' })[0].metadata['agui-state-sync'].acks, undefined);
    emitter.dispose();
  });
});

describe('emitter.applyEdits: idempotency and bounded histories', () => {
  test('a re-sent editId gets its first verdict again, with that seq, and applies once', async () => {
    const emitter = await emitterAt({ ...FORM, filler: 'x'.repeat(2000) });
    const add = edit('c1:1', 0, [{ op: 'add', path: '/tags/-', value: 'c' }]);
    emitter.applyEdits([add]);
    const again = emitter.applyEdits([add, edit('c1:2', 1, [{ op: 'add', path: '/tags/-', value: 'd' }])]);
    assert.deepEqual(again.results, [{ editId: 'c1:1', status: 'applied', seq: 1 }, { editId: 'c1:2', status: 'applied', seq: 2 }]);
    assert.deepEqual(emitter.state.tags, ['a', 'b', 'c', 'd']);
    assert.deepEqual(again.events[0].metadata['agui-state-sync'].acks, [{ editId: 'c1:1', status: 'applied', seq: 1 }, { editId: 'c1:2', status: 'applied' }],
      'in a delta, seq marks a repeated verdict only');
    emitter.dispose();
  });

  test('past the change log (editHistory) the history is unknown: a shared edit conflicts under agent-wins', async () => {
    const emitter = await emitterAt(FORM, { editHistory: 2 });
    for (let i = 0; i < 3; i++) emitter.patch([replace('/venue', `v${i}`)]);
    const { results } = emitter.applyEdits([edit('c1:1', 0, [replace('/form/note', 'nobody wrote this')]), edit('c1:2', 2, [replace('/form/name', 'ok')])]);
    assert.deepEqual(results.map((r) => r.reason ?? r.status), ['conflict', 'applied']);
    emitter.dispose();
  });

  test('a verdict forgotten past ackHistory is judged afresh (keep ackHistory above what clients re-send)', async () => {
    const emitter = await emitterAt(FORM, { ackHistory: 1 });
    const add = edit('c1:1', 0, [{ op: 'add', path: '/tags/-', value: 'c' }]);
    emitter.applyEdits([add]);
    emitter.applyEdits([edit('c1:2', 1, [replace('/form/note', 'n')])]);
    const again = emitter.applyEdits([add], { onConflict: 'user-wins' });
    assert.deepEqual(again.results, [{ editId: 'c1:1', status: 'applied', seq: 3 }]);
    assert.deepEqual(emitter.state.tags, ['a', 'b', 'c', 'c']);
    emitter.dispose();
  });

  test('snapshots repeat recent verdicts, each with its seq, for clients that missed the events', async () => {
    const emitter = await emitterAt({ ...FORM, filler: 'x'.repeat(2000) });
    emitter.applyEdits([edit('c1:1', 0, [replace('/form/note', 'n')]), edit('c1:2', 0, [replace('/proposal/amount', 1)])], { ownership: { '/proposal': 'agent' } });
    emitter.patch([replace('/venue', 'Porto')]);
    const expected = [{ editId: 'c1:1', status: 'applied', seq: 1 }, { editId: 'c1:2', status: 'rejected', reason: 'agent-owned', seq: 1 }];
    assert.deepEqual(emitter.snapshot().metadata['agui-state-sync'].acks, expected);
    const [caughtUp] = emitter.replaySince(0, 'other epoch');
    assert.equal(caughtUp.type, 'STATE_SNAPSHOT');
    assert.deepEqual(caughtUp.metadata['agui-state-sync'].acks, expected);
    emitter.dispose();
  });
});

describe('emitter.applyEdits: calls that cannot be judged apply nothing', () => {
  test('not an array, a malformed entry, a bad policy, nesting beyond maxDepth', async () => {
    const emitter = await emitterAt();
    let deep = 1;
    for (let i = 0; i < 200; i++) deep = [deep];
    const cases = [
      [() => emitter.applyEdits({ editId: 'c1:1' }), 'invalid-request'],
      [() => emitter.applyEdits('[]'), 'invalid-request'],
      [() => emitter.applyEdits([edit('c1:1', 0, [replace('/venue', 'x')]), { editId: 7, ops: [] }]), 'invalid-request'],
      [() => emitter.applyEdits([{ editId: 'c1:1', baseSeq: -1, ops: [] }]), 'invalid-request'],
      [() => emitter.applyEdits([{ editId: 'c1:1', baseSeq: 0 }]), 'invalid-request'],
      [() => emitter.applyEdits([], { ownership: { venue: 'agent' } }), 'invalid-options'],
      [() => emitter.applyEdits([], { ownership: { '/venue': 'mine' } }), 'invalid-options'],
      [() => emitter.applyEdits([], { onConflict: 'last-wins' }), 'invalid-options'],
      [() => emitter.applyEdits([], { owners: {} }), 'invalid-options'],
      [() => emitter.applyEdits([edit('c1:1', 0, [{ op: 'add', path: '/deep', value: deep }])]), 'limit-exceeded'],
    ];
    for (const [call, code] of cases) {
      assert.throws(call, (error) => error instanceof AguiSyncError && error.code === code, `expected ${code}`);
    }
    assert.equal(emitter.seq, 0);
    assert.deepEqual(plain(emitter.state), FORM);
    emitter.dispose();
  });

  test('a disposed emitter refuses', async () => {
    const emitter = await emitterAt();
    emitter.dispose();
    assert.throws(() => emitter.applyEdits([]), { code: 'disposed' });
  });
});

// --- the seeded property test ---------------------------------------------------

const POLICIES = [
  { ownership: { '/proposal': 'agent', '/form': 'user' } },
  { ownership: { '/shared/x': 'agent', '/form': 'user', '/list': 'user' } },
  {},
  { ownership: { '': 'user', '/proposal': 'agent' } },
];
const LEAVES = ['/form/a', '/form/b', '/shared/x', '/shared/y', '/proposal/amount', '/proposal/note'];
const SEEDS = 300;
const STEPS = 30;

function pick(r, list) {
  return list[Math.floor(r() * list.length)];
}

function leafValue(state, pointer) {
  const [, object, key] = pointer.split('/');
  return state[object][key];
}

// One op an app (or agent) might send; `state` only steers it towards valid ones.
function randomOp(r, state) {
  const k = r();
  if (k < 0.45) return replace(pick(r, LEAVES), Math.floor(r() * 50));
  if (k < 0.6) return { op: 'add', path: '/list/-', value: Math.floor(r() * 50) };
  const i = Math.floor(r() * (state.list.length + 1)); // sometimes one past the end
  if (k < 0.7) return { op: 'remove', path: `/list/${i}` };
  if (k < 0.8) return replace(`/list/${i}`, -1);
  if (k < 0.95) {
    const leaf = pick(r, LEAVES);
    return { op: 'test', path: leaf, value: r() < 0.7 ? leafValue(state, leaf) : 'stale' };
  }
  return replace(pick(r, ['/shared', '/proposal']), { x: 1, y: 2, amount: 3, note: 'n' });
}

function randomAgentOps(r, state) {
  const ops = [replace(pick(r, LEAVES.filter((l) => leafValue(state, l) !== undefined)), Math.floor(r() * 50))];
  if (r() < 0.3) ops.push({ op: 'add', path: '/list/-', value: 7 });
  return ops;
}

/** A request of 1-4 edits from up to three clients, some of them re-sent. */
function randomEdits(r, oracle, sent, counters) {
  const edits = [];
  for (let n = 1 + Math.floor(r() * 4); n > 0; n--) {
    if (sent.length > 0 && r() < 0.2) {
      edits.push(pick(r, sent));
      continue;
    }
    const origin = pick(r, ['c1', 'c2', 'c3']);
    counters[origin] = (counters[origin] ?? 0) + 1;
    const baseSeq = r() < 0.1 ? null : Math.max(oracle.start, oracle.seq - Math.floor(r() * 6));
    const ops = Array.from({ length: 1 + Math.floor(r() * 2) }, () => randomOp(r, oracle.state));
    const e = edit(`${origin}:${counters[origin]}`, baseSeq, r() < 0.03 ? [] : ops);
    sent.push(e);
    edits.push(e);
  }
  return edits;
}

// The events of one applyEdits call against the model's groups.
function checkEvents(events, groups, where) {
  assert.equal(events.length, groups.length, `${where}: one event per origin`);
  for (const [i, event] of events.entries()) {
    assert.equal(event.metadata['agui-state-sync'].seq, groups[i].seq, `${where}: event seq`);
    const acks = event.metadata['agui-state-sync'].acks;
    if (event.type === 'STATE_DELTA') {
      assert.deepEqual(acks, groups[i].acks, `${where}: the delta's acks`);
    } else {
      // A snapshot (the fallback when smaller) repeats the recent verdicts, all with seq.
      assert.ok(acks.every((a) => Number.isSafeInteger(a.seq)), `${where}: snapshot acks carry seq`);
      for (const ack of groups[i].acks) {
        assert.ok(acks.some((a) => a.editId === ack.editId && a.status === ack.status && a.reason === ack.reason), `${where}: ${ack.editId} in the snapshot`);
      }
    }
    assert.equal(new Set(groups[i].acks.map((a) => originOf(a.editId))).size, 1, `${where}: one origin per event`);
  }
}

async function runSchedule(seed) {
  const r = rng(seed);
  const policy = { ...pick(r, POLICIES), onConflict: r() < 0.5 ? 'agent-wins' : 'user-wins' };
  const initial = { form: { a: 0, b: 0 }, shared: { x: 0, y: 0 }, proposal: { amount: 0, note: '' }, list: [1, 2] };
  const emitter = await createStateEmitter({ initialState: initial, epoch: 'E', digestEvery: 4 });
  const receiver = await createStateSync();
  receiver.feed(emitter.encode(emitter.snapshot()));
  const oracle = new EditOracle(initial);
  const sent = [];
  const counters = {};
  try {
    for (let step = 0; step < STEPS; step++) {
      const where = `seed ${seed} step ${step}`;
      let events;
      if (r() < 0.4) {
        const ops = randomAgentOps(r, oracle.state);
        events = emitter.patch(ops);
        oracle.agentPatch(ops);
        assert.ok(events.every((e) => e.metadata['agui-state-sync'].acks === undefined || e.type === 'STATE_SNAPSHOT'), `${where}: agent writes carry no acks`);
      } else {
        const edits = randomEdits(r, oracle, sent, counters);
        const out = emitter.applyEdits(edits, policy);
        const model = oracle.applyEdits(edits, policy);
        assert.deepEqual(out.results, model.results, `${where}: verdicts`);
        checkEvents(out.events, model.groups, where);
        if (policy.onConflict === 'user-wins') assert.ok(out.results.every((v) => v.reason !== 'conflict'), `${where}: no conflict under user-wins`);
        events = out.events;
      }
      for (const event of events) receiver.feed(emitter.encode(event));
      assert.deepEqual(plain(emitter.state), oracle.state, `${where}: state`);
      assert.equal(emitter.seq, oracle.seq, `${where}: seq`);
      assert.equal(receiver.status, 'synced', `${where}: the receiver follows`);
      assert.deepEqual(plain(receiver.state), oracle.state, `${where}: the receiver's state`);
    }
    const verdicts = [...oracle.verdicts.values()].slice(-64);
    assert.deepEqual(emitter.snapshot().metadata['agui-state-sync'].acks, verdicts, `seed ${seed}: the snapshot repeats the latest verdicts`);
  } finally {
    emitter.dispose();
    receiver.dispose();
  }
}

describe('emitter.applyEdits: seeded property test against the rules', () => {
  test(`${SEEDS} seeded schedules of agent writes and edits from three clients agree with the model`, { timeout: 120000 }, async () => {
    for (let seed = 1; seed <= SEEDS; seed++) await runSchedule(seed);
  });
});

// --- engine edge cases (each was a C++ bug once) ------------------------------

describe('emitter.applyEdits: engine edge cases', () => {
  test('a call refused for seq-exhausted applies nothing', async () => {
    const emitter = await emitterAt({ a: 0, b: 0 }, { startSeq: 2 ** 53 - 2 });
    const before = emitter.seq;
    assert.throws(() => emitter.applyEdits([edit('c1:1', before, [replace('/a', 1)]), edit('c2:1', before, [replace('/b', 1)])]), { code: 'seq-exhausted' });
    assert.equal(emitter.seq, before, 'seq unchanged');
    assert.deepEqual(plain(emitter.state), { a: 0, b: 0 }, 'state unchanged');
    emitter.dispose();
  });

  test('the event answering a re-sent edit carries its verdict, even when it goes out as a snapshot', async () => {
    const emitter = await emitterAt({ n: 0 }); // small: every event goes out as a snapshot
    const first = edit('c1:1', 0, [replace('/n', 1)]);
    emitter.applyEdits([first]);
    for (let i = 0; i < 70; i++) emitter.applyEdits([edit(`c2:${i}`, emitter.seq, [replace('/n', i)])]);
    const { events, results } = emitter.applyEdits([first]);
    assert.deepEqual(results, [{ editId: 'c1:1', status: 'applied', seq: 1 }]);
    assert.equal(events[0].type, 'STATE_SNAPSHOT');
    assert.ok(events[0].metadata['agui-state-sync'].acks.some((a) => a.editId === 'c1:1'), 'the re-sent edit\'s verdict is in its event');
    emitter.dispose();
  });

  test('an editId longer than the limit is not echoed in acks or kept in the verdicts', async () => {
    const emitter = await emitterAt();
    const long = `${'x'.repeat(100000)}:1`;
    const { events } = emitter.applyEdits([edit(long, 0, [replace('/venue', 'x')])]);
    assert.ok(JSON.stringify(events).length < 10000, 'the event does not carry a 100 KB id');
    assert.ok(JSON.stringify(emitter.snapshot()).length < 10000, 'nor does every snapshot after it');
    emitter.dispose();
  });
});
