// The sender's activities (emitter.activities: the C++ ActivityFacade;
// docs/wire.md section 11): stamped ACTIVITY_SNAPSHOT / ACTIVITY_DELTA events
// that a receiver with { activities: true } verifies, an agent's events
// through write(), and catch-ups that answer where a client's activities are
// (forwardedProps.stateSync.activities, or the X-AGUI-State-Activities header).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HEADER_ACTIVITIES, memoryStore, writeCatchUp, catchUp } from '../../js/src/server.js';
import { formatActivities } from '../../js/src/shared/resync-wire.js';
import { pkg, plain, rng } from './support.mjs';

const KEY = 'agui-state-sync';
const FORM = { fields: { name: 'Ada', amount: 10 }, items: [] };
const encodeAll = (emitter, events) => events.map((e) => emitter.encode(e)).join('');

async function pair(options = {}) {
  const emitter = await pkg.createStateEmitter({ epoch: 'e', digestEvery: 2, snapshotRatio: 100, ...options });
  const sync = await pkg.createStateSync({ activities: true });
  return { emitter, sync, dispose: () => { emitter.dispose(); sync.dispose(); } };
}

test('emitter.activities stamps activity events a receiver verifies; they carry no SSE id', async () => {
  const { emitter, sync, dispose } = await pair();
  try {
    const a = emitter.activities;
    const first = a.snapshot('m1', 'checkout', FORM);
    assert.deepEqual([first[0].type, first[0].messageId, first[0].metadata[KEY].seq], ['ACTIVITY_SNAPSHOT', 'm1', 0]);
    assert.equal(first[0].metadata[KEY].epoch, emitter.epoch, 'a plain emitter\'s activities count in its epoch');
    const next = a.patch('m1', 'checkout', [{ op: 'replace', path: '/fields/amount', value: 12 }]);
    assert.equal(next[0].type, 'ACTIVITY_DELTA');
    const text = encodeAll(emitter, [...first, ...next]);
    assert.ok(!text.includes('id:'), 'an activity event never names the state\'s seq');
    sync.feed(text);
    assert.equal(sync.activities.m1.status, 'synced');
    assert.deepEqual(plain(sync.activities.m1.content), a.content('m1'));
    assert.equal(sync.activities.m1.lastSeq, a.seq('m1'));
    assert.equal(sync.activities.m1.epoch, a.epoch);
    assert.deepEqual(a.snapshot('m1', 'checkout', a.content('m1')), [], 'nothing changed');
    assert.throws(() => a.patch('m1', 'checkout', [{ op: 'remove', path: '/nope' }]), { code: 'patch-failed', opIndex: 0 });
    assert.throws(() => a.patch('ghost', 'checkout', []), { code: 'patch-failed' });
    assert.throws(() => a.snapshot(7, 'x', {}), { code: 'invalid-argument' });
    assert.equal(a.seq('ghost'), null);
    assert.equal(a.content('ghost'), undefined);
    assert.equal(a.size, 1);
  } finally {
    dispose();
  }
});

test('write(): an agent\'s activity events, its other members kept; a delta that does not apply is dropped until the next snapshot', async () => {
  const { emitter, dispose } = await pair();
  try {
    const a = emitter.activities;
    const event = { type: 'ACTIVITY_SNAPSHOT', messageId: 'm1', activityType: 'form', content: FORM, timestamp: 5, metadata: { trace: 'x' } };
    const { events } = a.write(event);
    assert.equal(events[0].timestamp, 5);
    assert.equal(events[0].metadata.trace, 'x');
    assert.equal(events[0].metadata[KEY].seq, 0);
    assert.deepEqual(a.write({ type: 'TEXT_MESSAGE_START', messageId: 'x' }).events, [{ type: 'TEXT_MESSAGE_START', messageId: 'x' }]);
    const bad = a.write({ type: 'ACTIVITY_DELTA', messageId: 'm1', activityType: 'form', patch: [{ op: 'replace', path: '/nope', value: 1 }] });
    assert.deepEqual([bad.events, bad.dropped, bad.error?.code], [[], 'patch-failed', 'patch-failed']);
    const later = a.write({ type: 'ACTIVITY_DELTA', messageId: 'm1', activityType: 'form', patch: [{ op: 'replace', path: '/items', value: [1] }] });
    assert.deepEqual([later.events, later.dropped, later.error], [[], 'patch-failed', null]);
    const healed = a.write({ ...event, content: { ...FORM, items: [1] } });
    assert.equal(healed.events[0].type, 'ACTIVITY_DELTA');
    assert.equal(a.write({ type: 'ACTIVITY_DELTA', messageId: 'm1', activityType: 'form', patch: [{ op: 'add', path: '/items/-', value: 2 }] }).dropped, null);
    assert.deepEqual(a.content('m1').items, [1, 2]);
  } finally {
    dispose();
  }
});

test('catchUp(): each activity by replay, snapshot or nothing, seeded; the client heals and stays verified', async () => {
  for (let seed = 1; seed <= 20; seed++) {
    const random = rng(seed);
    const { emitter, sync, dispose } = await pair({ replayMaxEvents: 8 });
    try {
      const a = emitter.activities;
      const ids = ['m1', 'm2', 'm3'];
      const contents = new Map(ids.map((id) => [id, { n: 0, list: [] }]));
      for (let step = 0; step < 40; step++) {
        const id = ids[Math.floor(random() * ids.length)];
        const next = structuredClone(contents.get(id));
        next.n++;
        if (random() < 0.3) next.list.push(step);
        contents.set(id, next);
        const events = a.snapshot(id, 'card', next);
        if (random() < 0.6) sync.feed(encodeAll(emitter, events)); // the rest lost
        for (const view of Object.values(sync.activities)) {
          if (view.status === 'synced') assert.ok(a.seq(view.messageId) >= view.lastSeq);
        }
      }
      const stateSync = { lastSeq: sync.lastSeq, epoch: sync.epoch, activities: sync.activityPositions() };
      const answer = catchUp(emitter, { forwardedProps: { stateSync } });
      assert.equal(answer.mode, 'snapshot', 'the state: no seq yet');
      assert.deepEqual(answer.activities.map((x) => x.messageId), ids);
      sync.feed(encodeAll(emitter, answer.events));
      for (const id of ids) {
        assert.equal(sync.activities[id].status, 'synced', `seed ${seed} ${id}`);
        assert.deepEqual(plain(sync.activities[id].content), contents.get(id));
      }
      const again = catchUp(emitter, { forwardedProps: { stateSync: { ...stateSync, lastSeq: sync.lastSeq, activities: sync.activityPositions() } } });
      assert.deepEqual(again.activities.map((x) => x.mode), ['current', 'current', 'current']);
    } finally {
      dispose();
    }
  }
});

test('writeCatchUp(): the activities header, the state\'s heartbeat when it is current, and a client that keeps no activities', async () => {
  const { emitter, sync, dispose } = await pair();
  try {
    const a = emitter.activities;
    sync.feed(encodeAll(emitter, [emitter.snapshot(), ...a.snapshot('m1', 'card', { v: 1 })]));
    a.snapshot('m1', 'card', { v: 2 });
    a.snapshot('m2', 'card', { v: 1 });
    const written = [];
    const headers = {};
    const res = { headersSent: false, setHeader: (k, v) => { headers[k] = v; }, write: (t) => written.push(t) };
    const request = { headers: { 'X-AGUI-State-Seq': String(sync.lastSeq), 'X-AGUI-State-Epoch': sync.epoch, [HEADER_ACTIVITIES]: formatActivities(sync.activityPositions()) } };
    const result = writeCatchUp(res, emitter, request);
    assert.equal(result.mode, 'current');
    assert.deepEqual(result.activities, [{ messageId: 'm1', mode: 'replay' }, { messageId: 'm2', mode: 'snapshot' }]);
    assert.match(written.join(''), /: hb \d+\n\n$/);
    sync.feed(written.join(''));
    assert.deepEqual(plain(sync.activities.m1.content), { v: 2 });
    assert.deepEqual(plain(sync.activities.m2.content), { v: 1 });
    const plainClient = catchUp(emitter, { headers: { 'X-AGUI-State-Seq': String(sync.lastSeq), 'X-AGUI-State-Epoch': sync.epoch } });
    assert.deepEqual([plainClient.events, plainClient.activities], [[], undefined], 'no activity positions: nothing about them');
    const garbled = catchUp(emitter, { headers: { [HEADER_ACTIVITIES]: '%E0%A4%A' } });
    assert.deepEqual(garbled.activities, [], 'a header the core cannot read is as absent');
    assert.ok(garbled.events.every((e) => e.type === 'STATE_SNAPSHOT'));
  } finally {
    dispose();
  }
});

test('a store-bound emitter stores its activities with the thread: its catch-up replays them, another instance and a restart continue them', async () => {
  const store = memoryStore();
  const emitter = await pkg.createStateEmitter({ store, key: 't1' });
  const sync = await pkg.createStateSync({ activities: true });
  let other = null;
  try {
    await emitter.update({ n: 1 });
    const text = 'a long note '.repeat(20); // a replay of one small change is cheaper than the snapshot
    const events = await emitter.activities.snapshot('m1', 'card', { v: 1, text });
    await emitter.activities.snapshot('m1', 'card', { v: 2, text });
    sync.feed(encodeAll(emitter, events));
    const answer = await catchUp(emitter, { forwardedProps: { stateSync: { lastSeq: null, activities: sync.activityPositions() } } });
    assert.equal(answer.mode, 'snapshot');
    assert.deepEqual(answer.activities, [{ messageId: 'm1', mode: 'replay' }], 'this instance replays what it wrote');
    sync.feed(encodeAll(emitter, answer.events));
    assert.deepEqual(plain(sync.state), { n: 1 });
    assert.deepEqual(plain(sync.activities.m1.content), { v: 2, text });
    assert.equal(sync.activities.m1.status, 'synced');
    // Another instance (or this one restarted) never saw m1: it continues the stored line.
    other = await pkg.createStateEmitter({ store, key: 't1' });
    const current = await catchUp(other, { forwardedProps: { stateSync: { lastSeq: null, activities: sync.activityPositions() } } });
    assert.deepEqual(current.activities, [{ messageId: 'm1', mode: 'current' }], 'the client is where the record is');
    const next = await other.activities.patch('m1', 'card', [{ op: 'replace', path: '/v', value: 3 }]);
    assert.equal(next[0].type, 'ACTIVITY_DELTA');
    assert.equal(next[0].metadata['agui-state-sync'].baseSeq, 1);
    sync.feed(encodeAll(other, next));
    assert.deepEqual(plain(sync.activities.m1.content), { v: 3, text });
    assert.equal(sync.activities.m1.status, 'synced');
    // The first instance's next write lost that race: it goes on top of the stored line, never forks it.
    const after = await emitter.activities.patch('m1', 'card', [{ op: 'add', path: '/note', value: 'a' }]);
    assert.equal(after[0].metadata['agui-state-sync'].baseSeq, 2);
    sync.feed(encodeAll(emitter, after));
    assert.deepEqual(plain(sync.activities.m1.content), { v: 3, text, note: 'a' });
    assert.equal(sync.activities.m1.status, 'synced');
  } finally {
    emitter.dispose();
    other?.dispose();
    sync.dispose();
  }
});
