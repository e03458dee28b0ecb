// Activities (AG-UI 1.0 ACTIVITY_SNAPSHOT / ACTIVITY_DELTA; docs/wire.md section
// 11) through the WASM engine: createStateSync({ activities: true }) keeps each
// messageId's content sequenced beside the state, as immutable mirrors. The
// control: @ag-ui/client 1.0 itself drops a delta for an unknown messageId
// without a word and keeps the old content when a patch fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AbstractAgent } from '@ag-ui/client';
import { Observable } from 'rxjs';
import { pkg, sse } from './support.mjs';

const KEY = 'agui-state-sync';
const snapshot = (messageId, content, seq) => ({
  type: 'ACTIVITY_SNAPSHOT', messageId, activityType: 'checkout', content, ...(seq === undefined ? {} : { metadata: { [KEY]: { seq } } }),
});
const delta = (messageId, patch, seq) => ({
  type: 'ACTIVITY_DELTA', messageId, activityType: 'checkout', patch, ...(seq === undefined ? {} : { metadata: { [KEY]: { seq, baseSeq: seq - 1 } } }),
});
const FORM = { items: [{ sku: 'a', qty: 1 }], address: { city: 'Lisbon' }, total: 10 };

async function withSync(options, body) {
  const sync = await pkg.createStateSync({ activities: true, ...options });
  try {
    await body(sync);
  } finally {
    sync.dispose();
  }
}

test('an activity is kept per messageId: verified content, identity kept for untouched subtrees', () => withSync({}, (sync) => {
  let heard = 0;
  const off = sync.subscribe(() => heard++);
  const [applied] = sync.feed(sse(snapshot('m1', FORM, 0)));
  assert.deepEqual([applied.kind, applied.type, applied.messageId, applied.seq], ['applied', 'ACTIVITY_SNAPSHOT', 'm1', 0]);
  const before = sync.activities;
  assert.equal(before.m1.status, 'synced');
  assert.deepEqual(before.m1.content, FORM);
  const [patched] = sync.feed(sse(delta('m1', [{ op: 'replace', path: '/total', value: 12 }], 1)));
  assert.equal(patched.content.total, 12);
  const after = sync.activities;
  assert.notEqual(after, before, 'a new object when an activity changed');
  assert.equal(after.m1.content.address, before.m1.content.address, 'an untouched subtree keeps its identity');
  assert.equal(after.m1.lastSeq, 1);
  assert.ok(Object.isFrozen(after) && Object.isFrozen(after.m1));
  sync.feed(sse({ type: 'STATE_SNAPSHOT', snapshot: { n: 1 }, metadata: { [KEY]: { seq: 5 } } }));
  assert.equal(sync.activities, after, 'a state event leaves the activities as they were');
  assert.equal(sync.lastSeq, 5, 'the state keeps its own line');
  assert.ok(heard >= 3);
  off();
}));

test('a failing activity patch applies nothing and resyncs that activity, naming it', () => withSync({}, (sync) => {
  sync.feed(sse(snapshot('m1', FORM, 0)));
  sync.feed(sse(snapshot('m2', FORM, 0)));
  const out = sync.feed(sse(delta('m1', [{ op: 'replace', path: '/total', value: 99 }, { op: 'test', path: '/address/city', value: 'Porto' }], 1)));
  assert.deepEqual(out.map((o) => [o.kind, o.reason, o.messageId]), [['resync', 'precondition-failed', 'm1']]);
  assert.equal(sync.activities.m1.status, 'resyncing');
  assert.deepEqual(sync.activities.m1.content, FORM, 'atomic: the first op was rolled back');
  assert.equal(sync.activities.m2.status, 'synced');
  assert.notEqual(sync.status, 'resyncing', 'the state is not touched');
  sync.feed(sse(snapshot('m1', { ...FORM, total: 99 }, 1)));
  assert.deepEqual([sync.activities.m1.status, sync.activities.m1.content.total], ['synced', 99]);
}));

test('a delta for an unknown messageId is never dropped silently: it waits for the snapshot', () => withSync({}, (sync) => {
  const out = sync.feed(sse(delta('late', [{ op: 'add', path: '/step', value: 2 }], 3)));
  assert.deepEqual(out.map((o) => [o.kind, o.reason, o.messageId]), [['resync', 'gap', 'late'], ['ignored', 'awaiting-snapshot', 'late']]);
  assert.equal(sync.activities.late.status, 'resyncing');
  sync.feed(sse(snapshot('late', { step: 1 }, 2)));
  assert.deepEqual(sync.activities.late.content, { step: 2 });
  assert.equal(sync.activities.late.status, 'synced');
}));

test('without the option, activity events pass through as events', async () => {
  const sync = await pkg.createStateSync();
  try {
    const out = sync.feed(sse(snapshot('m1', FORM, 0)) + sse(delta('ghost', [{ op: 'add', path: '/x', value: 1 }], 1)));
    assert.deepEqual(out.map((o) => o.kind), ['event', 'event']);
    assert.deepEqual(sync.activities, {});
  } finally {
    sync.dispose();
  }
});

// @ag-ui/client 1.0 applying the same events (its own defaultApplyEvents, through runAgent).
class ScriptAgent extends AbstractAgent {
  #events;
  constructor(events) {
    super({});
    this.#events = events;
  }

  run(input) {
    return new Observable((subscriber) => {
      subscriber.next({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
      for (const event of this.#events) subscriber.next(event);
      subscriber.next({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
      subscriber.complete();
    });
  }
}

test('control: @ag-ui/client drops an unknown activity delta silently and keeps old content on a failed patch', async (t) => {
  const warnings = [];
  t.mock.method(console, 'warn', (...args) => warnings.push(args.join(' ')));
  const events = [
    delta('late', [{ op: 'add', path: '/step', value: 2 }], 3), // its snapshot was lost
    snapshot('m1', FORM, 0),
    delta('m1', [{ op: 'replace', path: '/total', value: 99 }, { op: 'test', path: '/address/city', value: 'Porto' }], 1),
  ];
  const agent = new ScriptAgent(events);
  await agent.runAgent();
  const activities = agent.messages.filter((m) => m.role === 'activity');
  assert.deepEqual(activities.map((m) => m.id), ['m1'], 'the delta for "late" left no trace');
  assert.deepEqual(activities[0].content, FORM, 'the old content stays, shown as if current');
  assert.equal(warnings.filter((w) => /late/.test(w)).length, 0, 'not even a warning for the dropped delta');
  assert.ok(warnings.some((w) => /Failed to apply activity patch/.test(w)), 'only a console warning for the failed patch');
  // The engine, fed the same events: both are resyncs that say why.
  await withSync({}, (sync) => {
    const out = sync.feed(events.map((e) => sse(e)).join(''));
    assert.deepEqual(out.filter((o) => o.kind === 'resync').map((o) => [o.messageId, o.reason]), [['late', 'gap'], ['m1', 'precondition-failed']]);
  });
});
