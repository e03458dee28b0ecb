// once(store, key, effect): an effect runs once per key, a replay gets the
// recorded result, a concurrent caller is refused while the lease is held, a
// failed effect records nothing and gives its lease back, and the records are
// the ones Python's once() writes (scope 'agui-once', result:/lease: ids).
// On memoryStore() and on a real redis-server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { AguiSyncError } from '../../js/src/index.js';
import { jsDir } from './support.mjs';
import { RedisServer } from './redis-support.mjs';
import { until } from '../support/until.mjs';

const { memoryStore, once, redisStore } = await import(join(jsDir, 'src', 'server.js'));

/** A promise and its resolve, to hold an effect open until the test releases it. */
function gate() {
  let open;
  const opened = new Promise((resolve) => { open = resolve; });
  return { opened, open };
}

function suite(name, makeStore) {
  describe(`once() on ${name}`, () => {
    test('runs once per key; a replay gets the recorded result; the effect gets the key', async () => {
      const store = await makeStore();
      const calls = [];
      const effect = (key) => { calls.push(key); return { charged: 42, at: new Date(0) }; };
      const first = await once(store, 'pay-1', effect);
      const again = await once(store, 'pay-1', effect);
      assert.deepEqual(calls, ['pay-1']);
      assert.deepEqual(first, { charged: 42, at: '1970-01-01T00:00:00.000Z' }, 'what JSON keeps, as a replay will see it');
      assert.deepEqual(again, first);
      assert.equal(await store.peek('agui-once', 'result:pay-1'), '{"result":{"charged":42,"at":"1970-01-01T00:00:00.000Z"}}');
      await once(store, 'pay-2', effect);
      assert.deepEqual(calls, ['pay-1', 'pay-2']);
    });

    test('a concurrent caller is refused with run-active while the first runs, then gets its result', async () => {
      const store = await makeStore();
      const g = gate();
      let runs = 0;
      const slow = once(store, 'k', async () => { runs++; await g.opened; return 'done'; });
      // The first caller holds the lease once its effect has started (runs === 1).
      await until(() => runs === 1, 'the first effect to start');
      await assert.rejects(once(store, 'k', () => { runs++; }), (e) => e instanceof AguiSyncError && e.code === 'run-active');
      g.open();
      assert.equal(await slow, 'done');
      assert.equal(await once(store, 'k', () => { runs++; }), 'done');
      assert.equal(runs, 1);
    });

    test('a failed effect records nothing and gives the lease back: a retry runs it', async () => {
      const store = await makeStore();
      await assert.rejects(once(store, 'f', () => { throw new Error('boom'); }), /boom/);
      assert.equal(await store.peek('agui-once', 'result:f'), null);
      assert.equal(await store.peek('agui-once', 'lease:f'), null);
      assert.equal(await once(store, 'f', () => 7), 7);
    });

    test('release() never drops another holder\'s lease', async () => {
      const store = await makeStore();
      assert.equal((await store.claim('agui-once', 'lease:x', '{"lease":"a"}', 60_000)).ok, true);
      assert.equal(await store.release('agui-once', 'lease:x', '{"lease":"b"}'), false);
      assert.equal(await store.peek('agui-once', 'lease:x'), '{"lease":"a"}');
      assert.equal(await store.release('agui-once', 'lease:x', '{"lease":"a"}'), true);
    });

    test('misuse is a TypeError with a code; a result JSON cannot hold records nothing', async () => {
      const store = await makeStore();
      await assert.rejects(once(store, '', () => 1), (e) => e instanceof TypeError && e.code === 'invalid-options');
      await assert.rejects(once({}, 'k', () => 1), (e) => e instanceof TypeError && e.code === 'invalid-options');
      await assert.rejects(once(store, 'k', 'nope'), (e) => e instanceof TypeError && e.code === 'invalid-argument');
      await assert.rejects(once(store, 'k', () => 1, { leaseMs: 0 }), (e) => e.code === 'invalid-options');
      await assert.rejects(once(store, 'big', () => 10n), (e) => e instanceof TypeError && e.code === 'invalid-argument');
      assert.equal(await store.peek('agui-once', 'result:big'), null);
      assert.equal(await once(store, 'big', () => '10'), '10', 'the lease was given back');
    });
  });
}

suite('memoryStore()', () => memoryStore());

describe('redis', () => {
  let redis;
  const stores = [];
  before(async () => { redis = await RedisServer.start(); });
  after(async () => {
    for (const s of stores) await s.close?.();
    await redis?.stop();
  });
  suite('redisStore()', () => {
    const store = redisStore({ url: redis.url, prefix: `once-${stores.length}:` });
    stores.push(store);
    return store;
  });
});
