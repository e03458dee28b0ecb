// The proxy with a store (issue 17, section 1): createStateSyncProxy({ store })
// binds each thread's emitter to its threadId, so a proxy that restarts (a new
// proxy on the same store: memoryStore(), or a real redis-server) continues
// the thread's epoch and seq, and a client's next run is caught up without a
// snapshot. Without a store the same client pays one (the control).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildScript, startUpstream } from '../support/upstreams.mjs';
import { plain } from './support.mjs';
import { connectClient, createStateSyncProxy, readStream, runInput, runProxyCli, serve, startProxyCli } from './proxy-support.mjs';
import { RedisServer } from './redis-support.mjs';
import { receiverOf, storeKinds } from './store-support.mjs';

const T = { timeout: 30000 };
const bigState = (n) => ({ title: 'plan', counter: 0, items: Array.from({ length: n }, (_, i) => ({ id: `i${i}`, label: `item ${i}`.padEnd(120, '.') })) });

// Two runs of thread t1, each through a new proxy (the first one is closed: a restart).
async function runTwiceAcrossRestart(upstream, proxyOptions) {
  const first = createStateSyncProxy({ upstream: upstream.url, ...proxyOptions() });
  const firstServer = await serve(first);
  const client = await connectClient(firstServer.url(), runInput('t1', 'r1'));
  await client.done;
  const epoch = client.sync.epoch;
  const seq = client.sync.lastSeq;
  first.close();
  await firstServer.close();
  const second = createStateSyncProxy({ upstream: upstream.url, ...proxyOptions() });
  const secondServer = await serve(second);
  const again = await connectClient(secondServer.url(), runInput('t1', 'r2'), { sync: client.sync });
  await again.done;
  const result = { sync: client.sync, epoch, seq, stats: second.stats() };
  second.close();
  await secondServer.close();
  return result;
}

for (const kind of storeKinds()) {
  describe(`proxy with ${kind.name}`, () => {
    before(() => kind.setup());
    after(() => kind.teardown());

    test('a restarted proxy continues the thread: the next run is caught up without a snapshot', T, async () => {
      const upstream = await startUpstream({ shape: 'docs', script: buildScript({ seed: 4, steps: 10, toolCall: false }), stepMs: 1, initialState: bigState(40) });
      try {
        const store = kind.open();
        const { sync, epoch, seq } = await runTwiceAcrossRestart(upstream, () => ({ store }));
        assert.equal(sync.status, 'synced');
        assert.deepEqual(plain(sync.state), upstream.state('t1'));
        assert.equal(sync.epoch, epoch, 'the same epoch after the restart');
        assert.ok(sync.lastSeq > seq);
        assert.equal(sync.metrics().snapshots, 1, 'only the first run started with a snapshot');
        sync.dispose();
      } finally {
        await upstream.close();
      }
    });

    // Issue 27: a store-bound thread's run tries the emitter's own diff first
    // (where nobody else wrote since its last write), so a snapshot-only agent
    // costs its clients what it costs them on a thread in memory: not the
    // rebase diff, which replaces an array whose length changed whole.
    test('a snapshot-only agent reaches the client as the same deltas as on a thread in memory', T, async () => {
      const script = buildScript({ seed: 6, steps: 24, toolCall: false });
      const threadId = `t-fine-${kind.name}`;
      const streams = [];
      for (const store of [kind.open(), null]) {
        const upstream = await startUpstream({ shape: 'snapshots', script, stepMs: 1, initialState: bigState(20) });
        const proxy = createStateSyncProxy({ upstream: upstream.url, ...(store === null ? {} : { store }) });
        const server = await serve(proxy);
        try {
          const { events } = await readStream(server.url(), { input: runInput(threadId, 'r1') });
          const state = events.map((e) => e.data).filter((e) => e.type === 'STATE_SNAPSHOT' || e.type === 'STATE_DELTA');
          const sent = upstream.requests[0].events.map((e) => e.type);
          assert.ok(!sent.includes('STATE_DELTA') && sent.filter((type) => type === 'STATE_SNAPSHOT').length > 24, 'the agent sent snapshots only');
          const client = await receiverOf(events.map((e) => e.data));
          assert.deepEqual(plain(client.state), upstream.state(threadId));
          client.dispose();
          streams.push(state.map((e) => (e.type === 'STATE_DELTA' ? e.delta : 'snapshot')));
        } finally {
          proxy.close();
          await server.close();
          await upstream.close();
        }
      }
      const [stored, inMemory] = streams;
      assert.deepEqual(stored, inMemory);
      assert.equal(stored.filter((e) => e === 'snapshot').length, 1, 'one snapshot: the run\'s first state');
      const ops = stored.filter((e) => e !== 'snapshot').flat();
      assert.ok(ops.some((op) => op.path.startsWith('/items/')), 'items were added or removed one by one');
      assert.ok(!ops.some((op) => op.path === '/items'), 'never the whole array');
    });
  });
}

test('control: without a store, the restarted proxy has a new epoch and the client pays a snapshot', T, async () => {
  const upstream = await startUpstream({ shape: 'docs', script: buildScript({ seed: 4, steps: 10, toolCall: false }), stepMs: 1, initialState: bigState(40) });
  try {
    const { sync, epoch } = await runTwiceAcrossRestart(upstream, () => ({}));
    assert.equal(sync.status, 'synced');
    assert.notEqual(sync.epoch, epoch);
    assert.equal(sync.metrics().snapshots, 2);
    sync.dispose();
  } finally {
    await upstream.close();
  }
});

test('agui-state-sync-proxy --redis: the proxy process is killed and started again; the thread goes on in its epoch, caught up by replay', { timeout: 60000 }, async (t) => {
  const redis = await RedisServer.start();
  t.after(() => redis.close());
  const upstream = await startUpstream({ shape: 'docs', script: buildScript({ seed: 4, steps: 10, toolCall: false }), stepMs: 1, initialState: bigState(40) });
  t.after(() => upstream.close());
  const args = ['--upstream', upstream.url, '--port', '0', '--redis', redis.url, '--redis-prefix', 'cli:'];
  const first = await startProxyCli(args);
  assert.match(first.output(), /threads kept in Redis/);
  const client = await connectClient(first.url, runInput('t1', 'r1'));
  await client.done;
  const { epoch, lastSeq } = client.sync;
  assert.equal(await first.stop(), 0, 'SIGTERM: a clean exit (the Redis connection closed)');
  const second = await startProxyCli(args);
  try {
    const again = await connectClient(second.url, runInput('t1', 'r2'), { sync: client.sync });
    await again.done;
    assert.equal(client.sync.status, 'synced');
    assert.deepEqual(plain(client.sync.state), upstream.state('t1'));
    assert.equal(client.sync.epoch, epoch, 'the same epoch from the new process');
    assert.ok(client.sync.lastSeq > lastSeq);
    assert.equal(client.sync.metrics().snapshots, 1, 'only the first run started with a snapshot');
  } finally {
    client.sync.dispose();
    await second.stop();
  }
  for (const bad of [['--redis', 'http://127.0.0.1:6379'], ['--redis', 'not a url'], ['--redis-prefix', 'x:']]) {
    const r = runProxyCli(['--upstream', upstream.url, ...bad]);
    assert.equal(r.status, 2, bad.join(' '));
    assert.match(r.stderr, /--redis/);
  }
});

test('a threadId naming the library\'s own store keys (a NUL first: an activity record) is refused before anything is forwarded, and changes nothing', T, async () => {
  const { server } = await import('./store-support.mjs');
  const { pkg } = await import('./support.mjs');
  const store = server.memoryStore();
  const victim = await pkg.createStateEmitter({ store, key: 'victim' });
  await victim.activities.snapshot('m1', 'form', { payee: 'alice-payee' });
  const recordKey = `\u0000activities:victim`;
  const before = await store.load(recordKey);
  assert.ok(before !== null, 'the victim\'s activities are stored');
  const upstream = await startUpstream({ shape: 'snapshots', script: buildScript({ seed: 1, steps: 2, toolCall: false }), stepMs: 1 });
  const proxy = createStateSyncProxy({ upstream: upstream.url, store });
  const served = await serve(proxy);
  try {
    const response = await fetch(served.url(), {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(runInput(recordKey, 'r1')),
    });
    const text = await response.text();
    assert.equal(response.status, 400);
    assert.equal(JSON.parse(text).error.code, 'invalid-request');
    assert.ok(!text.includes('alice-payee'));
    assert.equal(upstream.requests.length, 0, 'nothing was forwarded');
    assert.deepEqual(await store.load(recordKey), before, 'the record is unchanged');
  } finally {
    proxy.close();
    await served.close();
    await upstream.close();
    victim.dispose();
  }
});
