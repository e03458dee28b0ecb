// sync.guard on an activity's content (docs/wire.md sections 7 and 11): a form
// rendered from an ACTIVITY_SNAPSHOT is viewed, watched and approved against
// that activity's own line, through a real emitter's stream (emitter.activities),
// and the agent checks the approval against its content of that activity
// (verifyApproval, consumeApproval), never against its state.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { consumeApproval, effectKey, memoryStore } from '../../js/src/server.js';
import { pkg, rng } from './support.mjs';

const { stateDigest, verifyApproval } = pkg;
const FORM = { payee: 'ACME', amount: 1200, lines: [{ sku: 'a', qty: 1 }], note: '' };
const encodeAll = (emitter, events) => events.map((e) => emitter.encode(e)).join('');

/** An emitter and a StateSync with activities on a fake clock, the form sent as activity m1. */
async function rig() {
  const clock = { t: 1000 };
  const emitter = await pkg.createStateEmitter({ epoch: 'e', snapshotRatio: 100 });
  const sync = await pkg.createStateSync({ activities: true, now: () => clock.t });
  const send = (events) => sync.feed(encodeAll(emitter, events));
  emitter.update({ proposal: 'p1' });
  send([emitter.snapshot(), ...emitter.activities.snapshot('m1', 'checkout', FORM)]);
  if (sync.status !== 'synced' || sync.activities.m1?.status !== 'synced') throw new Error('the rig did not sync');
  const patch = (ops) => send(emitter.activities.patch('m1', 'checkout', ops));
  return { emitter, sync, clock, send, patch, dispose: () => { sync.dispose(); emitter.dispose(); } };
}

test('guard.view(path, { messageId }): the mirror\'s value and a token with the activity\'s own seq', async () => {
  const { sync, emitter, patch, dispose } = await rig();
  try {
    patch([{ op: 'replace', path: '/note', value: 'x' }]);
    const view = sync.guard.view('/lines', { messageId: 'm1' });
    assert.equal(view.ok, true);
    assert.equal(view.value, sync.activities.m1.content.lines, 'read from the activity mirror');
    assert.deepEqual(view.token, { path: '/lines', seq: 1, digest: stateDigest(FORM.lines), messageId: 'm1' });
    assert.equal(emitter.activities.seq('m1'), 1);
    assert.deepEqual(sync.guard.view('/payee', { messageId: 'm9' }), { ok: false, reason: 'missing' });
    assert.deepEqual(sync.guard.view('/nope', { messageId: 'm1' }), { ok: false, reason: 'missing' });
    assert.deepEqual(sync.guard.view('nope', { messageId: 'm1' }), { ok: false, reason: 'invalid-token' });
    assert.throws(() => sync.guard.view('/payee', { messageId: 7 }), { code: 'invalid-argument' });
    assert.equal(sync.guard.view('/payee').ok, false, 'without messageId the state is read');
  } finally {
    dispose();
  }
});

test('approve(token) of an activity: the approval carries messageId and is the agent\'s content of it', async () => {
  const { sync, emitter, patch, send, dispose } = await rig();
  try {
    const { token } = sync.guard.view('/payee', { messageId: 'm1' });
    patch([{ op: 'replace', path: '/note', value: 'unrelated' }]);
    send(emitter.update({ proposal: 'p2' })); // the state moves: irrelevant to the form
    const approved = sync.guard.approve(token);
    assert.equal(approved.ok, true);
    assert.deepEqual(approved.approval, {
      path: '/payee', seq: 1, viewedSeq: 0, digest: stateDigest('ACME'), epoch: emitter.activities.epoch, messageId: 'm1',
    });
    const { approval } = approved;
    assert.equal(verifyApproval(approval, emitter.state, { activities: emitter.activities }), true);
    assert.equal(verifyApproval(approval, { payee: 'ACME' }), false, 'never judged against the state');
    assert.equal(verifyApproval(approval, null, { activities: { m1: { payee: 'ACME' } } }), true, 'a plain map works too');
    assert.equal(verifyApproval(approval, null, { activities: { m2: { payee: 'ACME' } } }), false);
    patch([{ op: 'replace', path: '/payee', value: 'Mallory' }]);
    assert.deepEqual(sync.guard.approve(token), { ok: false, reason: 'changed' });
    assert.equal(verifyApproval(approval, emitter.state, { activities: emitter.activities }), false);
  } finally {
    dispose();
  }
});

test('every refusal reason of an activity approval, by its own line', async () => {
  const { sync, emitter, clock, dispose } = await rig();
  try {
    const { token } = sync.guard.view('/amount', { messageId: 'm1' });
    clock.t += 60_000;
    assert.deepEqual(sync.guard.approve(token), { ok: false, reason: 'stale' });
    assert.equal(sync.guard.blocker({ messageId: 'm1' }), 'stale');
    const lost = emitter.activities.patch('m1', 'checkout', [{ op: 'replace', path: '/note', value: 'a' }]);
    const next = emitter.activities.patch('m1', 'checkout', [{ op: 'replace', path: '/note', value: 'b' }]);
    sync.feed(encodeAll(emitter, next)); // seq 2 before seq 1: held
    assert.deepEqual(sync.guard.approve(token), { ok: false, reason: 'gap-pending' });
    assert.equal(sync.guard.blocker(), null, 'the state\'s line has no gap');
    sync.feed(encodeAll(emitter, lost));
    assert.equal(sync.guard.approve(token).ok, true);
    // An unsequenced activity (a plain backend's) is unverified.
    sync.feed(`data: ${JSON.stringify({ type: 'ACTIVITY_SNAPSHOT', messageId: 'm2', activityType: 'checkout', content: FORM })}\n\n`);
    const plainView = sync.guard.view('/amount', { messageId: 'm2' });
    assert.deepEqual(sync.guard.approve(plainView.token), { ok: false, reason: 'unverified' });
    // A delta that does not apply: that activity resyncs, the state does not.
    sync.feed(`data: ${JSON.stringify({ type: 'ACTIVITY_DELTA', messageId: 'm1', activityType: 'checkout', patch: [{ op: 'remove', path: '/nope' }], metadata: { 'agui-state-sync': { seq: 3, baseSeq: 2 } } })}\n\n`);
    assert.deepEqual(sync.guard.approve(token), { ok: false, reason: 'resyncing' });
    assert.equal(sync.status, 'synced');
    assert.deepEqual(sync.guard.approve({ ...token, messageId: 'm9' }), { ok: false, reason: 'missing' });
    assert.deepEqual(sync.guard.approve({ ...token, messageId: 5 }), { ok: false, reason: 'invalid-token' });
    sync.feed(encodeAll(emitter, emitter.activities.snapshot('m3', 'checkout', FORM)));
    const fresh = sync.guard.view('/amount', { messageId: 'm3' });
    assert.equal(sync.guard.approve(fresh.token).ok, true);
    sync.end(); // the connection broke mid-run
    assert.deepEqual(sync.guard.approve(fresh.token), { ok: false, reason: 'disconnected' });
  } finally {
    dispose();
  }
});

test('guard.watch(path, listener, { messageId }) follows the activity: value identity, approvability, token', async () => {
  const { sync, patch, dispose } = await rig();
  try {
    const seen = [];
    const off = sync.guard.watch('/lines', (n) => seen.push(n), { messageId: 'm1' });
    assert.equal(seen.length, 1);
    assert.equal(seen[0].approvable, true);
    assert.equal(seen[0].value, sync.activities.m1.content.lines);
    assert.equal(seen[0].token.messageId, 'm1');
    patch([{ op: 'replace', path: '/note', value: 'x' }]);
    assert.equal(seen.length, 1, 'an untouched subtree keeps its identity: no notice');
    patch([{ op: 'replace', path: '/lines/0/qty', value: 3 }]);
    assert.equal(seen.length, 2);
    assert.deepEqual(seen[1].value, [{ sku: 'a', qty: 3 }]);
    assert.equal(sync.guard.approve(seen[0].token).reason, 'changed');
    const approved = sync.guard.approve(seen[1].token);
    assert.equal(approved.ok, true);
    assert.equal(approved.approval.messageId, 'm1');
    const ghost = [];
    sync.guard.watch('/x', (n) => ghost.push(n), { messageId: 'nope' });
    assert.deepEqual([ghost[0].approvable, ghost[0].reason, ghost[0].token], [false, 'missing', null]);
    assert.throws(() => sync.guard.watch('/x', () => {}, { messageId: 1 }), { code: 'invalid-argument' });
    off();
  } finally {
    dispose();
  }
});

test('seeded: an activity token approves iff the agent\'s content at its path still has its digest', async () => {
  const { sync, emitter, patch, dispose } = await rig();
  try {
    const random = rng(25);
    const paths = ['/payee', '/amount', '/lines', '/note'];
    const values = [0, 1, 'ACME', 'Mallory', [], [{ sku: 'a', qty: 1 }], ''];
    for (let round = 0; round < 200; round++) {
      const path = paths[Math.floor(random() * paths.length)];
      const view = sync.guard.view(path, { messageId: 'm1' });
      assert.equal(view.ok, true);
      const at = paths[Math.floor(random() * paths.length)];
      patch([{ op: 'replace', path: at, value: values[Math.floor(random() * values.length)] }]);
      const agent = emitter.activities.content('m1');
      const same = stateDigest(agent[path.slice(1)]) === view.token.digest;
      const approved = sync.guard.approve(view.token);
      assert.equal(approved.ok, same, `round ${round}: ${path} after a change at ${at}`);
      if (same) assert.equal(verifyApproval(approved.approval, emitter.state, { activities: emitter.activities }), true);
    }
  } finally {
    dispose();
  }
});

test('consumeApproval judges an activity approval by the agent\'s content of it; none held: missing', async () => {
  const { sync, emitter, dispose } = await rig();
  try {
    const { approval } = sync.guard.approve(sync.guard.view('/payee', { messageId: 'm1' }).token);
    const store = memoryStore();
    const base = { store, threadId: 't1', interruptId: 'i1' };
    assert.equal((await consumeApproval(approval, emitter.state, base)).reason, 'missing', 'no activities given');
    assert.equal((await consumeApproval(approval, { payee: 'ACME' }, { ...base, activities: { m1: { payee: 'X' } } })).reason, 'changed');
    const first = await consumeApproval(approval, emitter.state, { ...base, activities: emitter.activities });
    assert.deepEqual([first.ok, first.replayed], [true, false]);
    const again = await consumeApproval(approval, emitter.state, { ...base, activities: {} });
    assert.deepEqual([again.ok, again.replayed, again.effectKey], [true, true, first.effectKey]);
    const { messageId, ...asState } = approval;
    assert.equal(messageId, 'm1');
    assert.equal(effectKey(approval, { threadId: 't1', interruptId: 'i1' }), first.effectKey);
    assert.notEqual(effectKey(asState, { threadId: 't1', interruptId: 'i1' }), first.effectKey, 'the key names the activity');
  } finally {
    dispose();
  }
});
