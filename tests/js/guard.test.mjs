// sync.guard: view / approve / watch / interrupts through the C++ approval guard.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ResumeEntrySchema, RunAgentInputSchema } from '@ag-ui/core/schemas';
import { delta, pkg, snapshot, sse } from './support.mjs';
import { until } from '../support/until.mjs';

const { createStateSync, stateDigest } = pkg;

const STATE = { proposal: { amount: 100, to: 'acme' }, notes: ['a'], other: { n: 0 } };

/** A StateSync on a fake clock, fed a sequenced snapshot (seq 1, epoch 'e1'). */
async function synced(options = {}) {
  const clock = { t: 1000 };
  const sync = await createStateSync({ now: () => clock.t, ...options });
  sync.feed(sse(snapshot(STATE, 1, { epoch: 'e1' })));
  return { sync, clock };
}

const interruptEvent = (interrupts, extra = {}) => ({
  type: 'RUN_FINISHED', threadId: 't', runId: 'r1', outcome: { type: 'interrupt', interrupts }, ...extra,
});

describe('guard.view', () => {
  test('the value from sync.state (same object) and a token {path, seq, digest}', async () => {
    const { sync } = await synced();
    const view = sync.guard.view('/proposal');
    assert.equal(view.ok, true);
    assert.equal(view.value, sync.state.proposal, 'read from the mirror, not re-serialized');
    assert.deepEqual(view.token, { path: '/proposal', seq: 1, digest: stateDigest(STATE.proposal) });
    assert.equal(sync.guard.view('').value, sync.state);
    assert.equal(sync.guard.view('/notes/0').value, 'a');
    assert.deepEqual(sync.guard.view('/nope'), { ok: false, reason: 'missing' });
    assert.deepEqual(sync.guard.view('/notes/5'), { ok: false, reason: 'missing' });
    assert.deepEqual(sync.guard.view('no-slash'), { ok: false, reason: 'invalid-token' });
    assert.deepEqual(sync.guard.view(42), { ok: false, reason: 'invalid-token' });
    sync.dispose();
  });
});

describe('guard.approve', () => {
  test('ok: the approval carries path, seq, viewedSeq, digest, epoch; unrelated changes do not invalidate it', async () => {
    const { sync } = await synced();
    const { token } = sync.guard.view('/proposal');
    sync.feed(sse(delta([{ op: 'replace', path: '/other/n', value: 1 }], 2)));
    const result = sync.guard.approve(token);
    assert.deepEqual(result, {
      ok: true,
      approval: { path: '/proposal', seq: 2, viewedSeq: 1, digest: token.digest, epoch: 'e1' },
    });
    assert.equal(pkg.verifyApproval(result.approval, { ...STATE, other: { n: 1 } }), true);
    sync.dispose();
  });

  test('changed: the value at the path changed since it was viewed', async () => {
    const { sync } = await synced();
    const { token } = sync.guard.view('/proposal');
    sync.feed(sse(delta([{ op: 'replace', path: '/proposal/amount', value: 101 }], 2)));
    assert.deepEqual(sync.guard.approve(token), { ok: false, reason: 'changed' });
    // Changed back: the digest, not the seq, decides.
    sync.feed(sse(delta([{ op: 'replace', path: '/proposal/amount', value: 100 }], 3)));
    assert.equal(sync.guard.approve(token).ok, true);
    sync.dispose();
  });

  test('missing: the value was removed', async () => {
    const { sync } = await synced();
    const { token } = sync.guard.view('/proposal');
    sync.feed(sse(delta([{ op: 'remove', path: '/proposal' }], 2)));
    assert.deepEqual(sync.guard.approve(token), { ok: false, reason: 'missing' });
    sync.dispose();
  });

  test('resyncing: the engine knows its state is not the agent\'s', async () => {
    const { sync } = await synced();
    const { token } = sync.guard.view('/proposal');
    sync.feed(sse(delta([{ op: 'remove', path: '/does/not/exist' }], 2)));
    assert.equal(sync.status, 'resyncing');
    assert.deepEqual(sync.guard.approve(token), { ok: false, reason: 'resyncing' });
    assert.equal(sync.guard.blocker(), 'resyncing');
    sync.dispose();
  });

  test('gap-pending: an out-of-order delta waits for a missing one', async () => {
    const { sync } = await synced();
    const { token } = sync.guard.view('/proposal');
    sync.feed(sse(delta([{ op: 'replace', path: '/other/n', value: 5 }], 3)));
    assert.equal(sync.status, 'synced');
    assert.deepEqual(sync.guard.approve(token), { ok: false, reason: 'gap-pending' });
    sync.feed(sse(delta([{ op: 'replace', path: '/other/n', value: 4 }], 2)));
    assert.equal(sync.guard.approve(token).ok, true, 'the gap filled');
    sync.dispose();
  });

  test('unverified: an unsequenced stream, unless trustUnsequenced', async () => {
    const plain = await createStateSync({ now: () => 0 });
    plain.feed(sse(snapshot(STATE)));
    assert.equal(plain.status, 'unverified');
    assert.deepEqual(plain.guard.approve(plain.guard.view('/proposal').token), { ok: false, reason: 'unverified' });
    const trusting = await createStateSync({ now: () => 0, trustUnsequenced: true });
    trusting.feed(sse(snapshot(STATE)));
    const result = trusting.guard.approve(trusting.guard.view('/proposal').token);
    assert.equal(result.ok, true);
    assert.equal(result.approval.seq, null);
    assert.equal(result.approval.epoch, null);
    plain.dispose();
    trusting.dispose();
    await assert.rejects(createStateSync({ trustUnsequenced: 'yes' }), TypeError);
  });

  test('stale: nothing arrived for staleAfterMs (injectable clock); any byte, heartbeats included, is a sign of life', async () => {
    const { sync, clock } = await synced({ staleAfterMs: 1000 });
    const { token } = sync.guard.view('/proposal');
    clock.t += 1000;
    assert.equal(sync.guard.approve(token).ok, true, 'exactly staleAfterMs is still live');
    clock.t += 1;
    assert.deepEqual(sync.guard.approve(token), { ok: false, reason: 'stale' });
    assert.equal(sync.guard.blocker(), 'stale');
    sync.feed(''); // no bytes: no sign of life
    assert.equal(sync.guard.blocker(), 'stale');
    sync.feed(': hb 1\n\n');
    assert.equal(sync.guard.blocker(), null);
    assert.equal(sync.guard.approve(token).ok, true);
    clock.t += 5000;
    sync.feed(new Uint8Array([0x3a])); // one byte of a comment line
    assert.equal(sync.guard.approve(token).ok, true);
    // The default is 15 s.
    const { sync: other, clock: c2 } = await synced();
    c2.t += 15000;
    assert.equal(other.guard.blocker(), null);
    c2.t += 1;
    assert.equal(other.guard.blocker(), 'stale');
    sync.dispose();
    other.dispose();
    await assert.rejects(createStateSync({ staleAfterMs: 0 }), /staleAfterMs/);
    await assert.rejects(createStateSync({ now: 5 }), /now/);
  });

  test('disconnected: after end() until bytes arrive again, and watchers see it at once', async () => {
    const { sync } = await synced();
    const { token } = sync.guard.view('/proposal');
    const seen = [];
    sync.guard.watch('/proposal', (s) => seen.push(s.reason));
    sync.end();
    assert.deepEqual(sync.guard.approve(token), { ok: false, reason: 'disconnected' });
    sync.reset();
    assert.equal(sync.guard.blocker(), 'disconnected', 'a new connection is not proof of life yet');
    sync.feed(': hb 1\n\n');
    assert.equal(sync.guard.approve(token).ok, true);
    assert.deepEqual(seen, [null, 'disconnected', null]);
    sync.dispose();
  });

  test('invalid-token: anything that is not a token from view()', async () => {
    const { sync } = await synced();
    const { token } = sync.guard.view('/proposal');
    const hostile = {};
    Object.defineProperty(hostile, 'path', { get() { throw new Error('boom'); } });
    for (const bad of [
      null, undefined, 'token', {}, { path: '/proposal' }, { digest: token.digest }, { ...token, path: 7 },
      { ...token, digest: 'md5:abc' }, { ...token, path: 'proposal' }, { ...token, seq: -1 }, { ...token, seq: '1' },
      { ...token, seq: 1.5 }, hostile,
    ]) {
      assert.deepEqual(sync.guard.approve(bad), { ok: false, reason: 'invalid-token' }, JSON.stringify(String(bad)));
    }
    assert.equal(sync.guard.approve({ ...token, seq: null }).ok, true, 'seq is informational');
    assert.throws(() => sync.guard.approve(token, 'x'), TypeError);
    assert.throws(() => sync.guard.approve(token, { interruptId: 5 }), TypeError);
    sync.dispose();
  });

  test('disposed: every guard call answers instead of throwing', async () => {
    const { sync } = await synced();
    const guard = sync.guard;
    const { token } = guard.view('/proposal');
    sync.dispose();
    assert.deepEqual(guard.approve(token), { ok: false, reason: 'disposed' });
    assert.deepEqual(sync.guard.view('/proposal'), { ok: false, reason: 'disposed' });
    assert.equal(guard.blocker(), 'disposed');
    assert.deepEqual(guard.interrupts(), []);
    let calls = 0;
    const off = guard.watch('/proposal', () => calls++);
    off();
    guard.check();
    assert.equal(calls, 0);
    assert.throws(() => sync.state, /disposed/);
  });
});

describe('guard.watch', () => {
  test('fires now, then on value identity and approvability changes only', async () => {
    const { sync, clock } = await synced({ staleAfterMs: 1000 });
    const seen = [];
    const off = sync.guard.watch('/proposal', (s) => seen.push(s));
    assert.equal(seen.length, 1);
    assert.equal(seen[0].value, sync.state.proposal);
    assert.equal(seen[0].approvable, true);
    assert.equal(seen[0].reason, null);
    assert.deepEqual(seen[0].token, { path: '/proposal', seq: 1, digest: stateDigest(STATE.proposal) });

    sync.feed(sse(delta([{ op: 'replace', path: '/other/n', value: 1 }], 2)));
    assert.equal(seen.length, 1, 'an unrelated delta keeps /proposal\'s identity: no call');

    sync.feed(sse(delta([{ op: 'replace', path: '/proposal/amount', value: 7 }], 3)));
    assert.equal(seen.length, 2);
    assert.deepEqual(seen[1].value, { amount: 7, to: 'acme' });
    assert.equal(seen[1].token.digest, stateDigest({ amount: 7, to: 'acme' }));
    assert.equal(seen[1].token.seq, 3);
    assert.equal(sync.guard.approve(seen[1].token).ok, true, 'the token approves exactly the delivered value');

    clock.t += 1001;
    assert.equal(seen.length, 2, 'nothing runs on its own');
    sync.guard.check();
    assert.equal(seen.length, 3);
    assert.deepEqual([seen[2].approvable, seen[2].reason], [false, 'stale']);
    assert.equal(seen[2].value, seen[1].value);
    assert.equal(seen[2].token, seen[1].token, 'same value, same token');
    sync.guard.check();
    assert.equal(seen.length, 3, 'no change, no call');

    sync.feed(': hb 3\n\n');
    assert.deepEqual([seen.length, seen[3].approvable, seen[3].reason], [4, true, null]);

    // A gap makes it unapprovable; the replay that fills it makes it approvable again.
    sync.feed(sse(delta([{ op: 'replace', path: '/other/n', value: 9 }], 5)));
    assert.deepEqual([seen.length, seen[4].approvable, seen[4].reason], [5, false, 'gap-pending']);
    sync.feed(sse(delta([{ op: 'replace', path: '/other/n', value: 8 }], 4)));
    assert.deepEqual([seen.length, seen[5].approvable, seen[5].reason], [6, true, null]);

    // Resync (end of stream with a gap), then a snapshot heals it.
    sync.feed(sse(delta([{ op: 'replace', path: '/other/n', value: 1 }], 7)));
    sync.end();
    assert.equal(sync.status, 'resyncing');
    assert.deepEqual([seen.at(-1).approvable, seen.at(-1).reason], [false, 'resyncing']);
    const before = seen.length;
    sync.reset();
    assert.equal(seen.length, before, 'reset changes nothing here');
    sync.feed(sse(snapshot({ other: {} }, 10, { epoch: 'e1' })));
    assert.deepEqual([seen.at(-1).value, seen.at(-1).approvable, seen.at(-1).reason, seen.at(-1).token], [undefined, false, 'missing', null]);

    off();
    sync.feed(sse(snapshot(STATE, 11, { epoch: 'e1' })));
    assert.equal(seen.at(-1).reason, 'missing', 'unsubscribed');
    sync.dispose();
  });

  test('a throwing listener is reported and does not stop the others; bad arguments throw', async () => {
    const { sync } = await synced();
    const reported = [];
    const original = globalThis.reportError;
    globalThis.reportError = (e) => reported.push(e);
    try {
      let calls = 0;
      sync.guard.watch('/proposal', () => {
        throw new Error('listener bug');
      });
      sync.guard.watch('/proposal', () => calls++);
      sync.feed(sse(delta([{ op: 'replace', path: '/proposal/amount', value: 1 }], 2)));
      assert.equal(calls, 2);
      assert.equal(reported.length, 2);
    } finally {
      globalThis.reportError = original;
    }
    assert.throws(() => sync.guard.watch('/proposal'), TypeError);
    assert.throws(() => sync.guard.watch('bad', () => {}), TypeError);
    sync.dispose();
  });

  test('staleCheckMs: staleness is noticed without feed or check (timer while watched)', async () => {
    const { sync, clock } = await synced({ staleAfterMs: 1000, staleCheckMs: 5 });
    const seen = [];
    const off = sync.guard.watch('/proposal', (s) => seen.push(s.reason));
    clock.t += 2000;
    await until(() => seen.length >= 2, () => `the stale notice (seen ${JSON.stringify(seen)})`);
    assert.deepEqual(seen, [null, 'stale']);
    off();
    sync.dispose();
    await assert.rejects(createStateSync({ staleCheckMs: -1 }), TypeError);
  });
});

describe('AG-UI interrupts', () => {
  test('RUN_FINISHED interrupt outcome opens interrupts; approve binds one; resumeEntry answers it', async () => {
    const { sync } = await synced();
    assert.deepEqual(sync.guard.interrupts(), []);
    const interrupts = [
      { id: 'int-1', reason: 'approval', message: 'Send 100 to acme?', toolCallId: 'call-1' },
      { id: 'int-2', reason: 'input', metadata: { form: 'x' } },
    ];
    const outcomes = sync.feed(sse(interruptEvent(interrupts)));
    assert.equal(outcomes[0].kind, 'event');
    assert.deepEqual(sync.guard.interrupts(), interrupts);

    const { token } = sync.guard.view('/proposal');
    assert.deepEqual(sync.guard.approve(token, { interruptId: 'nope' }), { ok: false, reason: 'unknown-interrupt' });
    const { ok, approval } = sync.guard.approve(token, { interruptId: 'int-1' });
    assert.equal(ok, true);
    assert.equal(approval.interruptId, 'int-1');

    const entry = sync.guard.resumeEntry(approval, { note: 'looks right' });
    assert.deepEqual(entry, {
      interruptId: 'int-1',
      status: 'resolved',
      payload: { approved: true, approval, note: 'looks right' },
    });
    assert.ok(ResumeEntrySchema.safeParse(entry).success);
    const input = { threadId: 't', runId: 'r2', messages: [], resume: [entry] };
    assert.ok(RunAgentInputSchema.safeParse(input).success, 'RunAgentInput.resume is an array of these');
    assert.deepEqual(sync.guard.resumeEntry(approval).payload, { approved: true, approval });

    assert.throws(() => sync.guard.resumeEntry(sync.guard.approve(token).approval), TypeError, 'not bound to an interrupt');
    assert.throws(() => sync.guard.resumeEntry(approval, { approved: false }), TypeError);
    assert.throws(() => sync.guard.resumeEntry(approval, 'x'), TypeError);

    // A server re-announcing the interrupted run on a reconnect keeps them open.
    sync.feed(sse({ type: 'RUN_STARTED', threadId: 't', runId: 'r1' }));
    assert.deepEqual(sync.guard.interrupts(), interrupts);
    // The next run starts: the interrupts are answered (or moot).
    sync.feed(sse({ type: 'RUN_STARTED', threadId: 't', runId: 'r2' }));
    assert.deepEqual(sync.guard.interrupts(), []);
    assert.deepEqual(sync.guard.approve(token, { interruptId: 'int-1' }), { ok: false, reason: 'unknown-interrupt' });
    sync.dispose();
  });

  test('other outcomes close them; malformed interrupts are skipped', async () => {
    const { sync } = await synced();
    sync.feed(sse(interruptEvent([{ id: 'a', reason: 'r' }, { reason: 'no id' }, null, { id: 'a', reason: 'dup' }, { id: 'b', reason: 'r' }])));
    assert.deepEqual(sync.guard.interrupts().map((i) => i.id), ['a', 'b']);
    sync.feed(sse(interruptEvent([{ id: 'c', reason: 'r' }])));
    assert.deepEqual(sync.guard.interrupts().map((i) => i.id), ['c'], 'the latest interrupted run is what is open');
    sync.feed(sse({ type: 'RUN_FINISHED', threadId: 't', runId: 'r', outcome: { type: 'success' } }));
    assert.deepEqual(sync.guard.interrupts(), []);
    sync.feed(sse(interruptEvent([{ id: 'd', reason: 'r' }])));
    sync.feed(sse({ type: 'RUN_FINISHED', threadId: 't', runId: 'r' }));
    assert.deepEqual(sync.guard.interrupts(), [], 'no outcome = success');
    sync.feed(sse({ type: 'RUN_FINISHED', threadId: 't', runId: 'r', outcome: { type: 'interrupt', interrupts: 'x' } }));
    assert.deepEqual(sync.guard.interrupts(), []);
    sync.dispose();
  });
});

describe('sync.epoch', () => {
  test('null until a snapshot carries metadata.epoch; strings and integers; kept across unstamped snapshots', async () => {
    const sync = await createStateSync();
    assert.equal(sync.epoch, null);
    sync.feed(sse(snapshot({}, 1)));
    assert.equal(sync.epoch, null);
    sync.feed(sse(snapshot({}, 2, { epoch: 'abc' })));
    assert.equal(sync.epoch, 'abc');
    sync.feed(sse(snapshot({}, 3)));
    assert.equal(sync.epoch, 'abc', 'the engine keeps its epoch');
    sync.feed(sse(snapshot({}, 1, { epoch: 42 })));
    assert.equal(sync.epoch, '42');
    sync.feed(sse({ type: 'STATE_DELTA', delta: [], metadata: { seq: 2, baseSeq: 1, epoch: 'other' } }));
    assert.equal(sync.epoch, '42', 'a delta never changes it');
    sync.dispose();
    assert.throws(() => sync.epoch, /disposed/);
  });
});
