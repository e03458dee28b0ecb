// A store going away (issue 17, section 1): a real redis-server stopped and
// started again under a store-bound emitter, and a partition (one instance
// cut off while another writes the key). Live events keep flowing, catch-ups
// get snapshots, the emitter recovers and logs it, and no client is ever
// handed a replay (or a seq) that could belong to two different states.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { captureLogger, createStateEmitter, receiverOf, server, until } from './store-support.mjs';
import { RedisServer } from './redis-support.mjs';

const { catchUp, memoryStore, redisStore } = server;
const position = (lastSeq, epoch) => ({ forwardedProps: { stateSync: { lastSeq, epoch } } });
const state = (n) => ({ n, text: 'x'.repeat(2000) });


describe('redis-server stopped and started under an emitter', () => {
  let redis;
  before(async () => { redis = await RedisServer.start(); });
  after(() => redis.close());

  test('live events flow, catch-ups get snapshots, recovery is logged, then replays again', async () => {
    const logger = captureLogger();
    const store = redisStore({ url: redis.url, logger, timeoutMs: 500 });
    const e = await createStateEmitter({ store, key: 'outage', initialState: state(0) });
    const sent = [];
    for (let i = 1; i <= 4; i++) sent.push(...(await e.update(state(i))));
    const before = e.epoch;
    assert.equal((await catchUp(e, position(2, before))).mode, 'replay');

    await redis.stop();
    const first = await e.update(state(5));
    assert.equal(e.degraded, true);
    assert.equal(first.length, 1);
    assert.equal(first[0].type, 'STATE_SNAPSHOT', 'the first event of the outage line is a snapshot');
    assert.notEqual(first[0].metadata['agui-state-sync'].epoch, before, 'under an epoch of its own');
    const live = await e.update(state(6));
    assert.equal(live[0].type, 'STATE_DELTA', 'live events keep flowing');
    for (const [seq, epoch] of [[2, before], [4, before], [first[0].metadata['agui-state-sync'].seq, e.epoch]]) {
      assert.equal((await catchUp(e, position(seq, epoch))).mode, 'snapshot', `no replay while unreachable (${seq})`);
    }
    assert.ok(logger.lines.some((l) => l.level === 'warn' && /going on alone/.test(l.message)), JSON.stringify(logger.lines));

    // A client that followed the whole time: old line, then the outage line.
    const sync = await receiverOf([...sent, ...first, ...live]);
    assert.equal(sync.status, 'synced');
    assert.deepEqual(sync.state, state(6));

    await redis.restart();
    await until(() => !e.degraded, 'the emitter to recover');
    assert.ok(logger.lines.some((l) => l.level === 'info' && /reachable again/.test(l.message)), JSON.stringify(logger.lines));
    const after = await e.update(state(7));
    assert.equal(after[0].metadata['agui-state-sync'].epoch, e.epoch);
    sync.feed(new TextEncoder().encode(`data: ${JSON.stringify(after[0])}\n\n`));
    assert.equal(sync.status, 'synced');
    assert.equal((await catchUp(e, position(e.seq - 1, e.epoch))).mode, 'replay', 'the log vouches again');
    // Another instance continues the line the recovered emitter wrote.
    const otherStore = redisStore({ url: redis.url, logger: captureLogger() });
    const other = await createStateEmitter({ store: otherStore, key: 'outage' });
    assert.equal(other.epoch, e.epoch);
    assert.equal(other.seq, e.seq);
    assert.deepEqual(other.state, state(7));
    assert.equal(e.stats().store.degradations, 1);
    assert.equal(e.stats().store.recoveries, 1);
    sync.dispose();
    e.dispose();
    other.dispose();
    await store.close();
    await otherStore.close();
  });

  test('a store unreachable at creation rejects with store-unavailable', async () => {
    await redis.stop();
    const store = redisStore({ url: redis.url, logger: captureLogger(), timeoutMs: 300 });
    await assert.rejects(createStateEmitter({ store, key: 'down' }), { code: 'store-unavailable' });
    await store.close();
    await redis.restart();
  });
});

// A store wrapper that fails while `cut` is set: one instance partitioned away from a store another still reaches.
function partitioned(store) {
  const link = { cut: false };
  const wrapped = { log: () => {} };
  for (const name of ['load', 'init', 'append', 'head', 'reset', 'claim', 'peek']) {
    wrapped[name] = async (...args) => {
      if (link.cut) throw new Error('partitioned');
      return store[name](...args);
    };
  }
  return { store: wrapped, link };
}

describe('a partition: one instance cut off while another writes the key', () => {
  test('the cut-off instance never shares an epoch with what the other wrote; it rejoins the stored line', async () => {
    const shared = memoryStore({ logger: captureLogger() });
    const { store, link } = partitioned(shared);
    const a = await createStateEmitter({ store, key: 'p', initialState: state(0) });
    const b = await createStateEmitter({ store: shared, key: 'p' });
    const line = await a.update(state(1));
    link.cut = true;
    const aSent = [...(await a.update(state(100))), ...(await a.update(state(101)))];
    const bSent = [...(await b.update(state(200))), ...(await b.update(state(201)))];
    // Same seqs were written on both sides, but never under one epoch.
    const aEpochs = new Set(aSent.map((ev) => ev.metadata['agui-state-sync'].epoch));
    assert.ok(bSent.every((ev) => !aEpochs.has(ev.metadata['agui-state-sync'].epoch)));
    // A client of a reconnecting to b gets a snapshot, never b's replay.
    const aClient = await receiverOf([...line, ...aSent]);
    assert.deepEqual(aClient.state, state(101));
    assert.equal((await catchUp(b, position(aClient.lastSeq, aEpochs.values().next().value))).mode, 'snapshot');
    link.cut = false;
    await a.refresh(); // tries the store now: it was written meanwhile
    assert.equal(a.degraded, false);
    assert.equal(a.epoch, b.epoch, 'a continues the stored line');
    assert.deepEqual(a.state, state(101), "a's state on top: the last writer wins");
    await b.refresh();
    assert.deepEqual(b.state, state(101));
    aClient.dispose();
    a.dispose();
    b.dispose();
  });
});
