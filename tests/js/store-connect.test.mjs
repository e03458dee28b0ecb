// A fresh redisStore() (issue 38): requests that arrive while its first
// connection is still being made wait for it, on one client, rather than
// failing 'not connected' (a fresh --redis proxy answered them 500).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { RedisServer } from './redis-support.mjs';
import { jsDir } from './support.mjs';
import { until } from '../support/until.mjs';

const { redisStore } = await import(join(jsDir, 'src', 'server.js'));

let redis;
before(async () => { redis = await RedisServer.start(); });
after(() => redis.stop());

test('twenty requests at once on a store that has not connected yet all get their answer', async () => {
  const store = redisStore({ url: redis.url, prefix: `connect-${process.pid}:` });
  try {
    const answers = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => (i % 2 ? store.head(`k${i}`) : store.peek('s', `i${i}`))));
    assert.deepEqual(answers.map((a) => a.status), Array(20).fill('fulfilled'), answers.find((a) => a.reason)?.reason?.message);
    assert.ok(answers.every((a) => a.value === null));
    const client = await store.client();
    assert.equal(client.isReady, true);
  } finally {
    await store.close();
  }
});

// A run torn down with its proxy may still write after the store's close(). That write must
// fail and open nothing: a new connection nobody closes kept the test process (and would keep
// an app's) alive, reconnecting to a Redis that had gone.
test('close() is final: calls during and after it fail as unreachable and leave no connection open', async () => {
  // This file's redis-server is its own and its tests run one at a time: every other
  // connection on it is the store under test's.
  const admin = redisStore({ url: redis.url, prefix: 'admin:' });
  const others = async () => String(await (await admin.client()).sendCommand(['CLIENT', 'LIST'])).trim().split('\n').length - 1;
  try {
    const store = redisStore({ url: redis.url, prefix: `closed-${process.pid}:` });
    const unwatch = store.watch('k', () => {});
    const inFlight = Promise.allSettled([store.head('k'), store.peek('s', 'i')]);
    await store.close();
    await inFlight; // answered or refused: either way nothing may stay open
    const late = await Promise.allSettled([store.head('k'), store.claim('s', 'i', 'v'), store.client()]);
    for (const answer of late) {
      assert.equal(answer.status, 'rejected');
      assert.equal(answer.reason.code, 'store-unavailable', answer.reason.message);
    }
    store.watch('k2', () => {}); // a watch after close subscribes nowhere
    unwatch();
    await until(async () => (await others()) === 0, 'the closed store to leave Redis');
  } finally {
    await admin.close();
  }
});
