// A fresh redisStore() (issue 38): requests that arrive while its first
// connection is still being made wait for it, on one client, rather than
// failing 'not connected' (a fresh --redis proxy answered them 500).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { RedisServer } from './redis-support.mjs';
import { jsDir } from './support.mjs';

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
