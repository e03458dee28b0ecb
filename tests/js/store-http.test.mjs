// Restart and a second instance over real HTTP (issue 17, section 1): SSE
// servers on 127.0.0.1 whose emitters share a key in a real redis-server, and
// a real client (createStateSync + connectStateSync) whose requests a small
// switch in front sends to one instance or the other. A client that missed
// events while its server restarted, or that reconnects to the other
// instance, is caught up by a replay: its engine counts no snapshot but the first.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { captureLogger, createStateEmitter, createStateSync, server, until } from './store-support.mjs';
import { RedisServer } from './redis-support.mjs';
import { pkg } from './support.mjs';

const { redisStore, writeCatchUp, HEADER_CATCH_UP } = server;
const { connectStateSync } = pkg;
const state = (n) => ({ n, text: 'y'.repeat(3000), list: Array.from({ length: n }, (_, i) => i) });

// One server instance: its own store client, emitter and HTTP server; clients get the catch-up, then live events.
async function startInstance(redisUrl, key) {
  const store = redisStore({ url: redisUrl, logger: captureLogger() });
  const emitter = await createStateEmitter({ store, key, initialState: state(0) });
  const clients = new Set();
  const modes = [];
  const http = createServer((req, res) => {
    res.setHeader('content-type', 'text/event-stream');
    res.setHeader('cache-control', 'no-store');
    writeCatchUp(res, emitter, req).then((result) => {
      modes.push(result.mode);
      clients.add(res);
      res.on('close', () => clients.delete(res));
    }, () => res.destroy());
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${http.address().port}/stream`,
    emitter,
    modes,
    async update(next) {
      const events = await emitter.update(next);
      const text = events.map((e) => emitter.encode(e)).join('');
      for (const res of clients) res.write(text);
      return events;
    },
    cut() { // the connections break (the process lives on)
      for (const res of clients) res.destroy();
    },
    get connected() {
      return clients.size;
    },
    async close() { // the process going away: connections cut, nothing flushed on purpose
      for (const res of clients) res.destroy();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      emitter.dispose();
      await store.close();
    },
  };
}

// A client whose requests go where `route.target` says (nowhere: a refused connection).
async function startClient(route) {
  const sync = await createStateSync();
  const fetchVia = (url, init) => (route.target ? fetch(route.target.url, init) : Promise.reject(new TypeError('connection refused')));
  const connection = connectStateSync(sync, { url: 'http://switch/stream', fetch: fetchVia, backoff: { initialMs: 20, maxMs: 100 } });
  return { sync, connection };
}


describe('a client of a key shared through Redis', () => {
  let redis;
  before(async () => { redis = await RedisServer.start(); });
  after(() => redis.close());

  test('reconnecting to a restarted server: a replay, the same epoch and seq', async () => {
    const first = await startInstance(redis.url, 'restart-http');
    const route = { target: first };
    const { sync, connection } = await startClient(route);
    for (let i = 1; i <= 3; i++) await first.update(state(i));
    await until(() => sync.lastSeq === first.emitter.seq && sync.status === 'synced', 'the client to follow');
    const epoch = first.emitter.epoch;
    route.target = null; // the client is cut off ...
    first.cut();
    await until(() => first.connected === 0, 'the cut');
    for (let i = 4; i <= 6; i++) await first.update(state(i)); // ... misses these ...
    await first.close(); // ... and the server dies
    const restarted = await startInstance(redis.url, 'restart-http');
    assert.equal(restarted.emitter.epoch, epoch);
    assert.equal(restarted.emitter.seq, 6);
    route.target = restarted;
    await until(() => sync.lastSeq === 6 && sync.status === 'synced', 'the client to catch up');
    assert.deepEqual(restarted.modes, ['replay']);
    assert.deepEqual(sync.state, state(6));
    const metrics = sync.metrics();
    assert.equal(metrics.snapshots, 1, 'only the first connection got a snapshot');
    assert.equal(metrics.resyncSnapshots, 0);
    await restarted.update(state(7));
    await until(() => sync.lastSeq === 7, 'a live event after the restart');
    connection.close();
    await connection.done;
    sync.dispose();
    await restarted.close();
  });

  test('reconnecting to the other instance: a replay; then either instance writes without forking', async () => {
    const a = await startInstance(redis.url, 'fleet');
    const b = await startInstance(redis.url, 'fleet');
    assert.equal(b.emitter.epoch, a.emitter.epoch);
    const route = { target: a };
    const { sync, connection } = await startClient(route);
    for (let i = 1; i <= 3; i++) await a.update(state(i));
    await until(() => sync.lastSeq === 3 && sync.status === 'synced', 'the client to follow a');
    route.target = null;
    a.cut();
    await until(() => a.connected === 0, 'the cut');
    for (let i = 4; i <= 6; i++) await a.update(state(i)); // missed
    route.target = b;
    await until(() => sync.lastSeq === 6 && sync.status === 'synced', 'the client to catch up from b');
    assert.deepEqual(b.modes, ['replay']);
    assert.equal(sync.metrics().snapshots, 1);
    const live = await b.update(state(7));
    assert.equal(live[0].metadata['agui-state-sync'].seq, 7);
    await until(() => sync.lastSeq === 7, 'a live event from b');
    const fromA = await a.update(state(8)); // a lost the race to seq 7: it re-reads b's line first
    assert.equal(fromA[0].metadata['agui-state-sync'].seq, 8);
    assert.equal(a.emitter.stats().store.conflicts, 1);
    assert.deepEqual(sync.state, state(7));
    connection.close();
    await connection.done;
    sync.dispose();
    await a.close();
    await b.close();
  });
});
