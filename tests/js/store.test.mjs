// Store-bound emitters (issue 17, section 1) against memoryStore() and a real
// redis-server: a new emitter on a key continues its state, seq, epoch, replay
// log and edit ledger; two writers racing on one key never fork the seq
// (seeded property test); the log is bounded; a thread expires.
import { threadBase } from '../../js/src/server/store/key-layout.js';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertConsecutive, createStateEmitter, prng, receiverOf, server, storeKinds, storeOf, until } from './store-support.mjs';
import { plain } from './support.mjs';

const { catchUp } = server;
const position = (lastSeq, epoch) => ({ forwardedProps: { stateSync: { lastSeq, epoch } } });
const bigState = (n) => ({ n, text: 'x'.repeat(2000), list: [] }); // deltas stay far below a snapshot

for (const kind of storeKinds()) {
  describe(kind.name, () => {
    before(() => kind.setup());
    after(() => kind.teardown());

    test('a new emitter on the key continues its epoch, seq, state and log: a client gets a replay', async () => {
      const a = await createStateEmitter({ store: kind.open(), key: 'restart', initialState: bigState(0) });
      const sent = [];
      for (let i = 1; i <= 8; i++) sent.push(...(await a.update(bigState(i))));
      assert.ok(sent.every((e) => e.type === 'STATE_DELTA'));
      const { epoch, seq } = a;
      a.dispose(); // the process is gone; the store keeps the key
      const b = await createStateEmitter({ store: kind.open(), key: 'restart', initialState: { ignored: true }, epoch: 'ignored' });
      assert.equal(b.epoch, epoch);
      assert.equal(b.seq, seq);
      assert.deepEqual(b.state, bigState(8));
      const answer = await catchUp(b, position(3, epoch));
      assert.equal(answer.mode, 'replay');
      assert.deepEqual(answer.events, sent.slice(3), 'the missed deltas exactly as first sent');
      assert.equal((await catchUp(b, position(8, epoch))).mode, 'current');
      assert.equal((await catchUp(b, position(3, 'other'))).mode, 'snapshot');
      const next = await b.update(bigState(9));
      assert.deepEqual(next[0].metadata['agui-state-sync'], { ...next[0].metadata['agui-state-sync'], seq: seq + 1, baseSeq: seq, epoch });
      b.dispose();
    });

    test('the edit ledger continues: an edit re-sent to the new emitter applies once', async () => {
      const a = await createStateEmitter({ store: kind.open(), key: 'ledger', initialState: { items: [] } });
      const edit = { editId: 'client-1:1', baseSeq: 0, ops: [{ op: 'add', path: '/items/-', value: 'mine' }] };
      const first = await a.applyEdits([edit]);
      assert.equal(first.results[0].status, 'applied');
      a.dispose();
      const b = await createStateEmitter({ store: kind.open(), key: 'ledger' });
      const again = await b.applyEdits([edit]);
      assert.equal(again.results[0].status, 'applied');
      assert.equal(again.results[0].seq, first.results[0].seq, 'the first verdict, not a second application');
      assert.deepEqual(b.state, { items: ['mine'] });
      b.dispose();
    });

    test('a write carries its events and the state only now and then; the next instance rebuilds the state from the log', async () => {
      const raw = kind.open();
      const sent = { appends: 0, withState: 0, stateBytes: 0, eventBytes: 0 };
      // The same store, its appends counted.
      const counting = storeOf(raw, {
        incrementalState: raw.incrementalState,
        append: (key, batch) => {
          sent.appends++;
          if (batch.state !== undefined) { sent.withState++; sent.stateBytes += batch.state.length; }
          sent.eventBytes += batch.events.reduce((n, e) => n + e.text.length, 0);
          return raw.append(key, batch);
        },
      });
      const big = { items: Array.from({ length: 400 }, (_, i) => ({ id: i, label: `item ${i}`.padEnd(200, '.') })), n: 0 };
      const a = await createStateEmitter({ store: counting, key: 'incremental', initialState: big, replayMaxEvents: 64 });
      for (let i = 1; i <= 200; i++) await a.patch([{ op: 'replace', path: '/n', value: i }, { op: 'replace', path: `/items/${i}/label`, value: `v${i}` }]);
      assert.equal(sent.appends, 200);
      assert.ok(sent.withState <= Math.ceil(200 / 32), `the state went with ${sent.withState} of 200 appends`);
      assert.ok(sent.stateBytes < 10 * JSON.stringify(big).length, `${sent.stateBytes} state bytes for 200 writes`);
      assert.ok(sent.eventBytes < 200 * 400, 'each append carried its delta');
      assert.equal(a.stats().store.stateWrites, sent.withState);
      const stored = await raw.load('incremental');
      assert.equal(stored.seq, 200);
      assert.ok(stored.stateSeq <= 200 && stored.stateSeq >= 200 - 32, `stateSeq ${stored.stateSeq}`);
      const seqs = stored.events.map((t) => JSON.parse(t).metadata['agui-state-sync'].seq);
      for (let q = stored.stateSeq + 1; q <= 200; q++) assert.ok(seqs.includes(q), `the log keeps seq ${q}, after the stored state`);
      assert.ok(stored.events.length <= 64);
      // Another instance: the state at seq 200, built from the stored state and the log after it.
      const b = await createStateEmitter({ store: kind.open(), key: 'incremental' });
      assert.equal(b.seq, 200);
      assert.deepEqual(plain(b.state), plain(a.state));
      assert.equal(b.state.n, 200);
      assert.equal(b.state.items[150].label, 'v150');
      assert.equal((await catchUp(b, position(190, a.epoch))).mode, 'replay');
      const next = await b.patch([{ op: 'replace', path: '/n', value: -1 }]);
      assert.equal(next[0].metadata['agui-state-sync'].seq, 201);
      a.dispose();
      b.dispose();
    });

    if (kind.name === 'redisStore') {
      test('a thread stored before stateSeq existed (its state at seq) is continued', async () => {
        const store = kind.open();
        const a = await createStateEmitter({ store, key: 'legacy', initialState: { n: 0, list: [] } });
        for (let i = 1; i <= 5; i++) await a.patch([{ op: 'add', path: '/list/-', value: i }]);
        const client = await store.client();
        await client.sendCommand(['SET', `${threadBase(store.prefix, 'legacy')}:state`, JSON.stringify(a.state)]);
        await client.sendCommand(['HDEL', `${threadBase(store.prefix, 'legacy')}:meta`, 'stateSeq']);
        const stored = await store.load('legacy');
        assert.equal(stored.stateSeq, stored.seq, 'no stateSeq: the state is at seq');
        const b = await createStateEmitter({ store: kind.open(), key: 'legacy' });
        assert.deepEqual(plain(b.state), { n: 0, list: [1, 2, 3, 4, 5] });
        await b.patch([{ op: 'add', path: '/list/-', value: 6 }]);
        const c = await createStateEmitter({ store: kind.open(), key: 'legacy' });
        assert.deepEqual(plain(c.state), { n: 0, list: [1, 2, 3, 4, 5, 6] });
        for (const e of [a, b, c]) e.dispose();
      });
    }

    test('another instance\'s writes reach a subscriber through the store\'s notification, not the poll', async () => {
      const storeA = kind.open();
      const a = await createStateEmitter({ store: storeA, key: 'watched', initialState: bigState(0) }); // deltas, not snapshots
      const b = await createStateEmitter({ store: kind.open(), key: 'watched' }); // another instance (its own connection)
      const heard = [];
      // A poll once a minute: only the notification can deliver within the test.
      const off = a.subscribe((events) => heard.push(...events.map((e) => e.metadata['agui-state-sync'].seq)), { pollMs: 60000 });
      // The subscription is set up once the store listens: memoryStore's watch() at once, Redis once it confirms
      // the SUBSCRIBE on the thread's meta key (PUBSUB NUMSUB counts it).
      if (storeA.client) {
        const client = await storeA.client();
        await until(async () => (await client.sendCommand(['PUBSUB', 'NUMSUB', `${threadBase(storeA.prefix, 'watched')}:meta`]))[1] >= 1, 'Redis to confirm the SUBSCRIBE');
      }
      const written = [];
      for (let i = 1; i <= 5; i++) written.push(...(await b.patch([{ op: 'replace', path: '/n', value: i }])).map((e) => e.metadata['agui-state-sync'].seq));
      await until(() => heard.length >= 5, () => `b's five events (heard ${JSON.stringify(heard)})`);
      assert.deepEqual(heard, written, 'each of b\'s events once, in order');
      assert.equal(a.state.n, 5);
      off();
      // Nothing after unsubscribe, proved by an event that follows: a listener added now hears b's next write,
      // and a's emitter hands each event to the listeners it has when the event arrives, so once this one has
      // heard it, the removed listener has had its one chance. (Its default poll finds the write even if the
      // notification comes before Redis confirms the new SUBSCRIBE.)
      const later = [];
      const offLater = a.subscribe((events) => later.push(...events.map((e) => e.metadata['agui-state-sync'].seq)));
      const [sixth] = await b.patch([{ op: 'replace', path: '/n', value: 6 }]);
      await until(() => later.includes(sixth.metadata['agui-state-sync'].seq), 'a listener added after off() to hear the next write');
      offLater();
      assert.equal(heard.length, 5, 'nothing after unsubscribe');
      a.dispose();
      b.dispose();
    });

    test('two writers racing on one key never fork the seq; every write lands once (seeded)', async () => {
      for (let seed = 1; seed <= 6; seed++) await raceOnce(kind, seed);
    });

    test('the log is trimmed by count and by bytes, and a snapshot empties it', async () => {
      const store = kind.open();
      const e = await createStateEmitter({ store, key: 'bounds', initialState: bigState(0), replayMaxEvents: 5 });
      for (let i = 1; i <= 12; i++) await e.update(bigState(i));
      let stored = await store.load('bounds');
      assert.equal(stored.events.length, 5);
      assertConsecutive(stored.events.map((t) => JSON.parse(t)), 8, 'the newest five');
      const small = await createStateEmitter({ store, key: 'bytes', initialState: bigState(0), replayMaxBytes: 600 });
      for (let i = 1; i <= 12; i++) await small.update(bigState(i));
      stored = await store.load('bytes');
      const bytes = stored.events.reduce((sum, t) => sum + Buffer.byteLength(t), 0);
      assert.ok(bytes <= 600 && stored.events.length >= 1, `${bytes} bytes in ${stored.events.length} events`);
      await e.update({ replaced: 'whole' }); // far smaller than a delta: sent as a snapshot
      stored = await store.load('bounds');
      assert.equal(stored.events.length, 1);
      assert.equal(JSON.parse(stored.events[0]).type, 'STATE_SNAPSHOT');
      e.dispose();
      small.dispose();
    });
  });
}

// Two emitters (two instances: each its own store client) write one key at
// once: patches that append a unique item, edits, and (odd seeds) whole-state
// updates. Whatever each got back was committed: the seqs of all returned
// events are unique and consecutive, the store's log is exactly those events,
// and a receiver fed them ends synced on the store's state. Without updates
// (which replace the whole state: the last writer wins, as it should), every
// returned patch is in that state exactly once: none lost, none applied twice.
async function raceOnce(kind, seed) {
  const random = prng(seed);
  const key = `race-${seed}`;
  const [a, b] = await Promise.all([0, 1].map(() => createStateEmitter({ store: kind.open(), key, initialState: { items: [], n: 0 } })));
  const returned = [];
  const appended = [];
  const writes = [];
  for (let i = 0; i < 40; i++) {
    const emitter = random() < 0.5 ? a : b;
    const item = `${seed}-${i}`;
    const r = random();
    let write;
    const updates = seed % 2 === 1;
    if (r < 0.5) write = emitter.patch([{ op: 'add', path: '/items/-', value: item }]).then((events) => { appended.push(item); return events; });
    else if (r < 0.8 && updates) write = emitter.update({ ...emitter.state, n: i });
    else write = emitter.applyEdits([{ editId: `c:${item}`, baseSeq: emitter.seq, ops: [{ op: 'replace', path: '/n', value: -i }] }], { onConflict: 'user-wins' }).then((out) => out.events);
    writes.push(write.then((events) => returned.push(...events)));
    if (random() < 0.3) await new Promise((resolve) => setTimeout(resolve, random() * 3));
  }
  await Promise.all(writes);
  const msg = `${kind.name} seed ${seed}`;
  returned.sort((x, y) => x.metadata['agui-state-sync'].seq - y.metadata['agui-state-sync'].seq);
  assertConsecutive(returned, 1, msg);
  assert.equal(new Set(returned.map((e) => e.metadata['agui-state-sync'].epoch)).size, 1, msg);
  const stored = await kind.open().load(key);
  assert.equal(stored.seq, returned.at(-1).metadata['agui-state-sync'].seq, msg);
  const tail = returned.slice(returned.length - stored.events.length);
  assert.deepEqual(stored.events.map((t) => JSON.parse(t)), tail, `${msg}: the log is what was returned`);
  const sync = await receiverOf(returned);
  assert.equal(sync.status, 'synced', msg);
  // The store's state at its seq, as an instance that starts now rebuilds it (stored state + log after it).
  const fresh = await createStateEmitter({ store: kind.open(), key });
  assert.equal(fresh.seq, stored.seq, msg);
  assert.deepEqual(sync.state, plain(fresh.state), msg);
  for (const writer of [a, b]) {
    await writer.refresh();
    assert.deepEqual(plain(writer.state), plain(fresh.state), `${msg}: a writer's state once it caught up`);
  }
  fresh.dispose();
  if (seed % 2 === 0) for (const item of appended) assert.equal(sync.state.items.filter((x) => x === item).length, 1, `${msg}: ${item} once`);
  assert.ok(a.stats().store.conflicts + b.stats().store.conflicts > 0, `${msg}: the writers did race`);
  sync.dispose();
  a.dispose();
  b.dispose();
}

describe('threads expire after ttlMs without a write', () => {
  test('memoryStore: by its clock', async () => {
    let now = 1000;
    const store = server.memoryStore({ ttlMs: 500, now: () => now });
    const e = await createStateEmitter({ store, key: 'ttl', initialState: { a: 1 } });
    await e.update({ a: 2 });
    now += 400;
    await e.update({ a: 3 }); // a write renews it
    now += 400;
    assert.equal((await store.head('ttl')).seq, 2);
    now += 200;
    assert.equal(await store.load('ttl'), null);
    const fresh = await createStateEmitter({ store, key: 'ttl', initialState: { a: 0 } });
    assert.notEqual(fresh.epoch, e.epoch);
    assert.equal(fresh.seq, 0);
    e.dispose();
    fresh.dispose();
  });

  test('redisStore: PEXPIRE on the meta, state and log keys', async () => {
    const { RedisServer } = await import('./redis-support.mjs');
    const redis = await RedisServer.start();
    const store = server.redisStore({ url: redis.url, prefix: 'ttl:', ttlMs: 400 });
    try {
      const e = await createStateEmitter({ store, key: 'k', initialState: bigState(0) });
      await e.update(bigState(1));
      const client = await store.client();
      for (const suffix of ['meta', 'state', 'log']) {
        const ttl = await client.sendCommand(['PTTL', `${threadBase('ttl:', 'k')}:${suffix}`]);
        assert.ok(ttl > 0 && ttl <= 400, `${suffix}: ${ttl}`);
      }
      // Redis expires the keys on its own clock: wait for that, not for 600 ms.
      await until(async () => (await client.sendCommand(['EXISTS', ...['meta', 'state', 'log'].map((s) => `${threadBase('ttl:', 'k')}:${s}`)])) === 0, 'the keys to expire');
      const fresh = await createStateEmitter({ store, key: 'k', initialState: bigState(0) });
      assert.notEqual(fresh.epoch, e.epoch);
      // The old emitter's next write finds the key gone: it starts the key again from its own line.
      const events = await e.update(bigState(2));
      assert.equal(events[0].metadata['agui-state-sync'].epoch, fresh.epoch, 'it continues the line that now exists');
      e.dispose();
      fresh.dispose();
    } finally {
      await store.close();
      await redis.close();
    }
  });
});

describe('subscribe(): every event of the line, once, in order, on every instance', () => {
  test('two instances on memoryStore(): each listener sees both writers\' events as one consecutive line', async () => {
    const store = server.memoryStore();
    const a = await createStateEmitter({ store, key: 'fanout', initialState: bigState(0) });
    const b = await createStateEmitter({ store, key: 'fanout' });
    const seen = { a: [], b: [] };
    const offA = a.subscribe((events) => seen.a.push(...events), { pollMs: 5 });
    const offB = b.subscribe((events) => seen.b.push(...events), { pollMs: 5 });
    const written = [];
    for (let i = 1; i <= 10; i++) written.push(...(await (i % 3 ? a : b).update(bigState(i))));
    await until(() => seen.a.length >= written.length && seen.b.length >= written.length, 'both listeners to hear every write');
    for (const name of ['a', 'b']) {
      assertConsecutive(seen[name], 1, name);
      assert.deepEqual(seen[name], written, `${name}: what the two writers committed, in order`);
    }
    offA();
    offB();
    a.dispose();
    b.dispose();
  });
});

describe('store options and a writer that always loses', () => {
  test('a store and a key go together; a wrong store is refused', async () => {
    const store = server.memoryStore();
    await assert.rejects(createStateEmitter({ store }), { code: 'invalid-options' });
    await assert.rejects(createStateEmitter({ key: 'k' }), { code: 'invalid-options' });
    await assert.rejects(createStateEmitter({ store: { load() {} }, key: 'k' }), { code: 'invalid-options' });
    await assert.rejects(createStateEmitter({ store, key: '' }), { code: 'invalid-options' });
    await assert.rejects(createStateEmitter({ store, key: 'k', nope: 1 }), { code: 'invalid-options' });
    assert.throws(() => server.redisStore({ nope: 1 }), { code: 'invalid-options' });
    assert.throws(() => server.memoryStore({ ttlMs: 0 }), { code: 'invalid-options' });
  });

  test('another writer winning every race: the write gives up with store-conflict and nothing is sent', async () => {
    const raw = server.memoryStore();
    const other = await createStateEmitter({ store: raw, key: 'lose', initialState: { n: 0 } });
    let n = 0;
    const losing = storeOf(raw, {
      append: async (...args) => {
        await other.update({ n: ++n }); // the other instance gets there first, every time
        return raw.append(...args);
      },
    });
    const loser = await createStateEmitter({ store: losing, key: 'lose' });
    const heard = [];
    loser.subscribe((events) => heard.push(...events.map((e) => e.metadata['agui-state-sync'].seq)), { pollMs: 1000 });
    await assert.rejects(loser.update({ n: -1 }), { code: 'store-conflict' });
    assert.equal(loser.stats().store.conflicts, 16);
    assert.deepEqual(heard, Array.from({ length: 16 }, (_, i) => i + 1), "only the winner's events, once each, in order");
    assert.equal(loser.seq, other.seq, "it stands on the winner's line");
    assert.deepEqual(loser.state, other.state);
    loser.dispose();
    other.dispose();
  });
});
