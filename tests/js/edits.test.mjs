// User edits through WASM, by example (issue 14): sync.edit / state /
// confirmedState / pendingEdits / runInput, the new outcomes, the guard's
// edit-pending, structural sharing, and hostile edits. The examples mirror
// tests/native/test_edits.cpp; edits-property.test.mjs runs them under random
// schedules and faults.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { sseHead, startServer } from './ag-ui-support.mjs';
import { EditPair, find, PAIR_POLICY } from './edits-support.mjs';
import { jsDir, kInternals, pkg, plain } from './support.mjs';

const { AguiSyncError, connectStateSync, createStateEmitter, createStateSync } = pkg;
const { catchUp } = await import(join(jsDir, 'src', 'server.js'));

const replace = (path, value) => ({ op: 'replace', path, value });
const add = (path, value) => ({ op: 'add', path, value });

// The engine's own view of the two layers and of the pending list, parsed.
function engineLayers(sync) {
  const { facade } = sync[kInternals]();
  return {
    confirmed: JSON.parse(facade.stateJson()),
    visible: JSON.parse(facade.visibleStateJson()),
    pending: JSON.parse(facade.pendingEditsJson()),
  };
}

// The JS mirrors agree with the engine: both states, and the pending list (ops, baseSeq, order).
function assertMirrors(sync) {
  const engine = engineLayers(sync);
  assert.deepEqual(plain(sync.confirmedState), engine.confirmed, 'confirmed mirror');
  assert.deepEqual(plain(sync.state), engine.visible, 'visible mirror');
  assert.deepEqual(plain(sync.pendingEdits()), engine.pending.map(({ editId, baseSeq, ops }) => ({ editId, baseSeq, ops })));
  if (sync.pendingEdits().length === 0) assert.equal(sync.state, sync.confirmedState, 'one object while nothing is pending');
  assert.equal(sync.metrics().mirrorReloads, 0);
}

async function withPair(options, fn) {
  const pair = await EditPair.create(options);
  try {
    await fn(pair);
  } finally {
    pair.dispose();
  }
}

describe('edits: the examples of tests/native/test_edits.cpp through WASM', () => {
  test('an edit shows at once, stays pending, and is acknowledged by the agent', () => withPair({}, (p) => {
    const id = p.edit([replace('/shared/budget', 20)]);
    assert.equal(id, 'tab1:1');
    assert.equal(p.sync.state.shared.budget, 20);
    assert.equal(p.sync.confirmedState.shared.budget, 10);
    assert.deepEqual(plain(p.sync.pendingEdits()), [{ editId: id, baseSeq: p.sync.lastSeq, ops: [replace('/shared/budget', 20)] }]);
    assertMirrors(p.sync);

    const out = p.run();
    const acked = find(out, 'edit-acked');
    assert.deepEqual(acked, { kind: 'edit-acked', editId: id, seq: p.emitter.seq });
    assert.equal(out.indexOf(acked), out.findIndex((o) => o.kind === 'applied') + 1, 'right after the applied outcome that carried it');
    assert.deepEqual(p.sync.pendingEdits(), []);
    assert.deepEqual(plain(p.sync.state), p.emitter.state);
    assert.equal(p.sync.state, p.sync.confirmedState);
    assert.deepEqual(p.results, [{ editId: id, status: 'applied', seq: p.emitter.seq }]);
    assertMirrors(p.sync);
  }));

  test('refused edits change nothing, notify nobody, and say why', () => withPair({}, (p) => {
    const before = p.sync.state;
    let notified = 0;
    p.sync.subscribe(() => notified++);
    const refusals = [
      [[replace('/proposal/to', 'mallory')], 'agent-owned', 0],
      [[replace('', {})], 'agent-owned', 0], // above an agent-owned path: "" would overwrite /proposal
      [[replace('/shared/budget', 1), replace('/proposal', {})], 'agent-owned', 1],
      [[{ op: 'frobnicate', path: '/x' }], 'invalid-patch', 0],
      [[add('/shared/budget', 1), { op: 'test', path: '/shared/budget', value: 99 }], 'precondition-failed', 1],
      [[replace('/shared/nothing', 1)], 'patch-failed', 0],
      [[], 'invalid-patch', undefined],
    ];
    for (const [ops, reason, opIndex] of refusals) {
      const r = p.sync.edit(ops);
      assert.equal(r.ok, false, JSON.stringify(ops));
      assert.equal(r.reason, reason, JSON.stringify(ops));
      assert.equal(r.code, reason);
      assert.equal(typeof r.message, 'string');
      assert.equal(r.opIndex, opIndex, JSON.stringify(ops));
      assert.ok(pkg.AguiSyncError && !(r instanceof Error), 'an answer, not an error');
    }
    assert.equal(p.sync.state, before, 'the very same object');
    assert.deepEqual(p.sync.pendingEdits(), []);
    assert.equal(notified, 0);
    assertMirrors(p.sync);
  }));

  test('a shared-path conflict under agent-wins is reported and the agent\'s value shows', () => withPair({}, (p) => {
    const id = p.edit([replace('/shared/budget', 20)]);
    const out = p.agent([replace('/shared/budget', 30)]);
    assert.deepEqual(find(out, 'conflict'), {
      kind: 'conflict', editId: id, seq: p.emitter.seq, path: '/shared/budget', mine: 20, theirs: 30, resolution: 'agent-wins',
    });
    assert.deepEqual(p.sync.pendingEdits(), []);
    assert.equal(p.sync.state.shared.budget, 30);
    assertMirrors(p.sync);
    // Had the edit reached the agent, it would have been rejected the same way.
    const { results } = p.emitter.applyEdits([{ editId: id, baseSeq: p.emitter.seq - 1, ops: [replace('/shared/budget', 20)] }], p.policy);
    assert.equal(results[0].status, 'rejected');
    assert.equal(results[0].reason, 'conflict');
  }));

  test('under user-wins the edit survives the conflict and is applied', () => withPair({ onConflict: 'user-wins' }, (p) => {
    p.edit([replace('/shared/budget', 20)]);
    const out = p.agent([replace('/shared/budget', 30)]);
    assert.equal(find(out, 'conflict').resolution, 'user-wins');
    assert.equal(p.sync.state.shared.budget, 20);
    assert.equal(p.sync.confirmedState.shared.budget, 30);
    assert.equal(find(out, 'applied').state, p.sync.state, 'the outcome\'s state is the visible state');
    assertMirrors(p.sync);
    assert.ok(find(p.run(), 'edit-acked'));
    assert.equal(p.emitter.state.shared.budget, 20);
    assert.deepEqual(plain(p.sync.state), p.emitter.state);
    assertMirrors(p.sync);
  }));

  test('an agent write to a user-owned path is masked until the ack', () => withPair({}, (p) => {
    p.edit([replace('/form/note', 'mine')]);
    const out = p.agent([replace('/form/note', 'theirs')]);
    assert.equal(find(out, 'conflict'), undefined);
    assert.equal(p.sync.state.form.note, 'mine');
    assert.equal(p.sync.confirmedState.form.note, 'theirs');
    assertMirrors(p.sync);
    assert.ok(find(p.run(), 'edit-acked'));
    assert.equal(p.emitter.state.form.note, 'mine');
    assert.deepEqual(plain(p.sync.state), p.emitter.state);
  }));

  test('a re-sent edit applies once and is acknowledged again', () => withPair({}, (p) => {
    const id = p.edit([add('/shared/items', []), add('/shared/items/-', 1)]);
    const first = p.emitter.applyEdits(p.sync.pendingEdits(), p.policy); // its events are lost
    // The client re-sends with the next run, and catches up on the gap the new event reveals.
    let out = p.run();
    assert.deepEqual(p.results, [{ editId: id, status: 'applied', seq: first.results[0].seq }]);
    assert.deepEqual(p.emitter.state.shared.items, [1]);
    assert.equal(find(out, 'edit-acked'), undefined, 'held behind the gap');
    out = p.deliver(p.emitter.replaySince(p.sync.lastSeq, p.sync.epoch, p.sync.resyncRequest()?.held));
    assert.deepEqual(find(out, 'edit-acked'), { kind: 'edit-acked', editId: id, seq: first.results[0].seq });
    assert.deepEqual(plain(p.sync.state), p.emitter.state);
    assertMirrors(p.sync);
  }));

  test('an ack survives a catch-up answered by a snapshot', () => withPair({}, (p) => {
    const id = p.edit([replace('/shared/budget', 20)]);
    p.emitter.applyEdits(p.sync.pendingEdits(), p.policy); // its event is lost
    p.emitter.patch([replace('/proposal/to', 'bob')]);
    const out = p.deliver([p.emitter.snapshot()]);
    assert.equal(find(out, 'edit-acked')?.editId, id);
    assert.deepEqual(p.sync.pendingEdits(), []);
    assert.deepEqual(plain(p.sync.state), p.emitter.state);
    assertMirrors(p.sync);
  }));

  test('a write into an array counts as a write to the whole array', () => withPair({}, (p) => {
    p.agent([add('/shared/list', ['a', 'b', 'c'])]);
    p.edit([replace('/shared/list/2', 'C')]);
    const out = p.agent([add('/shared/list/0', 'z')]); // the user's index 2 now names "b"
    assert.equal(find(out, 'conflict').path, '/shared/list');
    assert.deepEqual(p.sync.state.shared.list, ['z', 'a', 'b', 'c']);
    assertMirrors(p.sync);
  }));

  test('an edit the agent rejects is reported and leaves the visible state', () => withPair({}, (p) => {
    const id = p.edit([replace('/shared/budget', 20)]);
    p.emitter.patch([replace('/shared/budget', 30)]); // lost on the way: the client never hears of it
    const { results, events } = p.emitter.applyEdits(p.sync.pendingEdits(), p.policy);
    assert.deepEqual(results.map((r) => [r.status, r.reason]), [['rejected', 'conflict']]);
    const out = p.deliver([p.emitter.snapshot(), ...events]);
    const rejected = out.filter((o) => o.kind === 'edit-rejected' || o.kind === 'conflict');
    assert.equal(rejected.length, 1, 'reported once');
    assert.equal(rejected[0].editId, id);
    assert.deepEqual(p.sync.pendingEdits(), []);
    assert.equal(p.sync.state.shared.budget, 30);
    assertMirrors(p.sync);
  }));
});

describe('edits: the guard refuses paths with a pending edit at, under or above them', () => {
  test('view, approve and watch say edit-pending; the token is of the agent\'s value', () => withPair({}, (p) => {
    const token = p.sync.guard.view('/shared/budget').token;
    const seen = [];
    const off = p.sync.guard.watch('/shared/budget', (notice) => seen.push(notice));
    p.edit([replace('/shared/budget', 20)]);
    for (const path of ['/shared/budget', '/shared', '']) assert.deepEqual(p.sync.guard.view(path), { ok: false, reason: 'edit-pending' }, path);
    assert.deepEqual(p.sync.guard.approve(token), { ok: false, reason: 'edit-pending' });
    assert.equal(p.sync.guard.view('/proposal/to').ok, true);
    assert.deepEqual(seen.at(-1), { value: 20, approvable: false, reason: 'edit-pending', token: null }, 'the watcher shows the person\'s value, not approvable');
    p.run();
    const view = p.sync.guard.view('/shared/budget');
    assert.equal(view.ok, true);
    assert.equal(view.value, 20);
    assert.equal(p.sync.guard.approve(view.token).ok, true);
    assert.equal(seen.at(-1).approvable, true);
    assert.equal(seen.at(-1).value, 20);
    off();
  }));
});

describe('edits: the JS mirrors', () => {
  test('structural sharing: an edit and an agent delta over a pending edit copy only the paths they touch', () => withPair({
    initialState: { proposal: { to: 'alice' }, form: { note: 'hi', big: { deep: [1, 2, 3] } }, shared: { budget: 10, other: { x: 1 } } },
  }, (p) => {
    const before = p.sync.state;
    p.edit([replace('/shared/budget', 20)]);
    const visible = p.sync.state;
    assert.notEqual(visible, before);
    assert.equal(visible.form, before.form, 'untouched subtree: same object');
    assert.equal(visible.proposal, before.proposal);
    assert.equal(visible.shared.other, before.shared.other);
    assert.equal(p.sync.confirmedState, before, 'the confirmed state did not move');

    p.agent([replace('/proposal/to', 'bob')]);
    assert.equal(p.sync.state.form, before.form, 'still shared after a rebuild');
    assert.equal(p.sync.state.shared.other, before.shared.other);
    assert.equal(p.sync.state.shared.budget, 20);
    assert.equal(p.sync.confirmedState.form, before.form);
    assertMirrors(p.sync);

    const outcomes = p.deliver([]); // nothing happened: nothing rebuilt
    assert.deepEqual(outcomes, []);
    const still = p.sync.state;
    p.sync.feed(': hb\n\n');
    assert.equal(p.sync.state, still, 'a heartbeat rebuilds nothing');
  }));

  test('subscribers hear an edit and its ack; pendingEdits() keeps its identity until the list changes', () => withPair({}, (p) => {
    let calls = 0;
    p.sync.subscribe(() => calls++);
    const empty = p.sync.pendingEdits();
    assert.equal(p.sync.pendingEdits(), empty);
    p.edit([replace('/form/note', 'x')]);
    assert.equal(calls, 1);
    const list = p.sync.pendingEdits();
    assert.notEqual(list, empty);
    assert.ok(Object.isFrozen(list) && Object.isFrozen(list[0]) && Object.isFrozen(list[0].ops[0]));
    p.agent([replace('/shared/budget', 11)]);
    assert.equal(p.sync.pendingEdits(), list, 'the same array while the same edits are pending');
    assert.equal(calls, 2);
    p.run();
    assert.equal(calls, 3);
    assert.deepEqual(p.sync.pendingEdits(), []);
  }));

  test('each applied outcome of one feed carries the visible state after it', () => withPair({}, (p) => {
    const id = p.edit([replace('/shared/budget', 20)]);
    // One chunk: an agent write elsewhere, then the event that acknowledges the edit, then another write.
    const writeNote = p.emitter.patch([replace('/form/note', 'agent')]);
    const { events } = p.emitter.applyEdits(p.sync.pendingEdits(), p.policy);
    const writeTo = p.emitter.patch([replace('/proposal/to', 'bob')]);
    const out = p.deliver([...writeNote, ...events, ...writeTo]);
    const applied = out.filter((o) => o.kind === 'applied');
    assert.equal(applied.length, 3);
    assert.deepEqual(plain(applied[0].state), { ...p.emitter.state, proposal: { to: 'alice' } }, 'the pending edit shows on the agent\'s write');
    assert.equal(applied[0].state.shared.budget, 20);
    assert.equal(find(out, 'edit-acked').editId, id);
    assert.equal(applied[2].state, p.sync.state);
    assert.equal(p.sync.state, p.sync.confirmedState);
    assertMirrors(p.sync);
  }));

  test('runInput(): the visible state and forwardedProps.stateSync.edits', () => withPair({}, (p) => {
    assert.deepEqual(p.sync.runInput(), { state: p.sync.state, forwardedProps: { stateSync: { edits: [] } } });
    const id = p.edit([replace('/form/note', 'x')]);
    const input = p.sync.runInput();
    assert.equal(input.state, p.sync.state);
    assert.deepEqual(plain(input.forwardedProps.stateSync.edits), [{ editId: id, baseSeq: 0, ops: [replace('/form/note', 'x')] }]);
    assert.deepEqual(Object.keys(input), ['state', 'forwardedProps']);
    // What an agent does with it.
    const { results } = p.emitter.applyEdits(input.forwardedProps.stateSync.edits, p.policy);
    assert.equal(results[0].status, 'applied');
  }));

  test('the edit is the engine\'s copy: changing the ops afterwards changes nothing', () => withPair({}, (p) => {
    const value = { nested: [1] };
    const ops = [add('/shared/obj', value)];
    p.edit(ops);
    value.nested.push(2);
    ops.push(replace('/shared/budget', 0));
    assert.deepEqual(p.sync.state.shared.obj, { nested: [1] });
    assert.equal(p.sync.pendingEdits()[0].ops.length, 1);
    assertMirrors(p.sync);
  }));
});

describe('edits: options', () => {
  test('ownership, onConflict and clientId are checked; the default clientId is random', async () => {
    const bad = [
      { ownership: [] }, { ownership: { '/a': 'nobody' } }, { ownership: 'user' }, { onConflict: 'last-wins' },
      { clientId: '' }, { clientId: 7 }, { clientId: 'é'.repeat(65) }, { ownership: { 'not-a-pointer': 'user' } },
    ];
    for (const options of bad) {
      await assert.rejects(createStateSync(options), (e) => e instanceof AguiSyncError && e.code === 'invalid-options', JSON.stringify(options));
    }
    const a = await createStateSync();
    const b = await createStateSync({ clientId: 'x'.repeat(128) });
    const c = await createStateSync();
    try {
      const idA = a.edit([add('/k', 1)]).editId;
      const idC = c.edit([add('/k', 1)]).editId;
      assert.match(idA, /^[0-9a-f]{32}:1$/);
      assert.notEqual(idA, idC, 'two clients never mint the same editId');
      assert.equal(b.edit([add('/k', 1)]).editId, `${'x'.repeat(128)}:1`);
    } finally {
      a.dispose();
      b.dispose();
      c.dispose();
    }
  });

  test('edit() after dispose throws disposed', async () => {
    const sync = await createStateSync();
    sync.dispose();
    assert.throws(() => sync.edit([]), (e) => e.code === 'disposed');
    assert.throws(() => sync.pendingEdits(), (e) => e.code === 'disposed');
  });
});

describe('edits: hostile edits never crash and never half-apply', () => {
  const refusedWith = (p, ops, reason) => {
    const before = p.sync.state;
    const r = p.sync.edit(ops);
    assert.equal(r.ok, false);
    assert.equal(r.reason, reason);
    assert.equal(p.sync.state, before);
    assert.deepEqual(p.sync.pendingEdits(), []);
  };

  test('not an array, not JSON, sparse, or ops of the wrong shape: invalid-patch', () => withPair({}, (p) => {
    const cyclic = [];
    cyclic.push(cyclic);
    const notArrays = [undefined, null, 0, 'ops', {}, { length: 1, 0: add('/x', 1) }, new Uint8Array(1)];
    for (const ops of notArrays) refusedWith(p, ops, 'invalid-patch');
    for (const ops of [[1n], cyclic, [, ], [null], [{}], [{ op: 'add' }], [{ op: 'add', path: 7, value: 1 }], [{ op: 'add', path: 'x', value: 1 }]]) {
      refusedWith(p, ops, 'invalid-patch');
    }
    assertMirrors(p.sync);
  }));

  test('huge and deep: limit-exceeded, and the engine goes on', () => withPair({}, (p) => {
    refusedWith(p, [add('/shared/big', 'x'.repeat(9 << 20))], 'limit-exceeded');
    let deep = 0;
    for (let i = 0; i < 200000; i++) deep = [deep];
    refusedWith(p, [add('/shared/deep', deep)], 'limit-exceeded');
    let nested = 0;
    for (let i = 0; i < 1000; i++) nested = { a: nested };
    refusedWith(p, [add('/shared/deep', nested)], 'limit-exceeded');
    refusedWith(p, Array.from({ length: 300000 }, () => replace('/shared/budget', 1)), 'limit-exceeded');
    assert.equal(p.sync.edit([replace('/shared/budget', 5)]).ok, true, 'still usable');
    assertMirrors(p.sync);
  }));

  test('at most 1024 pending edits: the next one is limit-exceeded', () => withPair({}, (p) => {
    for (let i = 0; i < 1024; i++) assert.equal(p.sync.edit([replace('/shared/budget', i)]).ok, true);
    refusedWithState(p, [replace('/shared/budget', -1)]);
    assertMirrors(p.sync);
    assert.ok(find(p.run(), 'edit-acked'));
    assert.deepEqual(p.sync.pendingEdits(), []);
    assert.equal(p.sync.state.shared.budget, 1023);
  }));

  test('__proto__, constructor and prototype keys stay data', () => withPair({}, (p) => {
    const value = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":1}}');
    p.edit([add('/shared/__proto__', value), add('/shared/constructor', 1), add('/shared/prototype', 2)]);
    assert.equal({}.polluted, undefined);
    assert.equal(Object.getPrototypeOf(p.sync.state.shared), Object.prototype);
    assert.ok(Object.prototype.hasOwnProperty.call(p.sync.state.shared, '__proto__'));
    assert.deepEqual(Object.keys(p.sync.state.shared['__proto__']), ['__proto__', 'constructor']);
    assertMirrors(p.sync);
    assert.ok(find(p.run(), 'edit-acked'));
    assert.deepEqual(plain(p.sync.state), p.emitter.state);
  }));

  test('__proto__ as an op member or a path token: data, or refused, never a prototype', () => withPair({}, (p) => {
    const ops = JSON.parse('[{"op":"add","path":"/shared/k","value":1,"__proto__":{"op":"remove"}}]');
    assert.equal(p.sync.edit(ops).ok, true, 'an unknown member is ignored');
    assert.equal(p.sync.state.shared.k, 1);
    refusedWithState(p, [add('/__proto__/polluted', true)], 'patch-failed'); // the root has no "__proto__" member
    assert.equal(p.sync.edit([add('/__proto__', { polluted: true })]).ok, true);
    assert.equal({}.polluted, undefined);
    assert.equal(Object.getPrototypeOf(p.sync.state), Object.prototype);
    assert.deepEqual(p.sync.state['__proto__'], { polluted: true });
    assertMirrors(p.sync);
  }));
});

// A refusal with `reason` that leaves the state and the pending list as they were (the same objects).
function refusedWithState(p, ops, reason = 'limit-exceeded') {
  const before = p.sync.state;
  const pending = p.sync.pendingEdits();
  const r = p.sync.edit(ops);
  assert.equal(r.reason, reason);
  assert.equal(p.sync.state, before);
  assert.equal(p.sync.pendingEdits(), pending);
}

test('the options of createStateSync reach the engine (ownership above a path, the default policy)', async () => {
  const sync = await createStateSync({ ...PAIR_POLICY, initialState: { proposal: { to: 'a' }, form: {} } });
  try {
    assert.equal(sync.edit([replace('/proposal/to', 'b')]).reason, 'agent-owned');
    assert.equal(sync.edit([add('/form/x', 1)]).ok, true);
    assert.equal(sync.pendingEdits()[0].baseSeq, null, 'no position yet');
  } finally {
    sync.dispose();
  }
});

test('connectStateSync: body() with sync.runInput() carries the edits on every attempt; a re-sent edit applies once', { timeout: 20000 }, async () => {
  const emitter = await createStateEmitter({ initialState: { shared: { items: [] } }, snapshotRatio: 100 });
  const verdicts = [];
  // The first answer applies the edit and breaks before its ack is sent; the reconnect
  // re-sends the edit (still pending) and catches up, which brings the ack.
  const server = await startServer(({ input, res, index }) => {
    sseHead(res, { getContentType: () => 'text/event-stream' });
    const send = (events) => res.write(events.map((event) => emitter.encode(event)).join(''));
    send(catchUp(emitter, input).events);
    const { events, results } = emitter.applyEdits(input.forwardedProps.stateSync.edits ?? [], {});
    verdicts.push(...results);
    if (index === 0) return res.destroy();
    send(events);
    res.end('data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n');
  });
  const sync = await createStateSync({ clientId: 'tab' });
  try {
    sync.feed(emitter.encode(emitter.snapshot()));
    const { editId } = sync.edit([{ op: 'add', path: '/shared/items/-', value: 'mine' }]);
    const outcomes = [];
    const connection = connectStateSync(sync, {
      url: server.url,
      backoff: { initialMs: 2, maxMs: 10, jitter: 0 },
      body: () => ({ threadId: 't', runId: 'r', messages: [], ...sync.runInput() }),
      onOutcome: (o) => outcomes.push(o),
    });
    await connection.done;
    const sent = server.requests.map((r) => r.input.forwardedProps.stateSync);
    assert.equal(sent.length, 2);
    for (const stateSync of sent) assert.deepEqual(stateSync.edits.map((e) => e.editId), [editId], 'every attempt carries it');
    assert.equal(sent[1].lastSeq, 0, 'the position is the loop\'s');
    assert.equal(server.requests[1].input.state.shared.items[0], 'mine', 'RunAgentInput.state: the visible state');
    assert.deepEqual(verdicts.map((v) => [v.status, v.seq]), [['applied', 1], ['applied', 1]], 'the same verdict twice, applied once');
    assert.deepEqual(emitter.state.shared.items, ['mine']);
    assert.deepEqual(outcomes.filter((o) => o.kind === 'edit-acked').map((o) => o.editId), [editId]);
    assert.deepEqual(sync.pendingEdits(), []);
    assert.deepEqual(plain(sync.state), emitter.state);
  } finally {
    sync.dispose();
    emitter.dispose();
    await server.close();
  }
});
