// A Python instance and a Node proxy serve one thread (issue 26, item 3,
// "Python"): StateSyncMiddleware on a Redis store (tests/python/live/
// store_server.py, uvicorn) and createStateSyncProxy on the same store in
// front of a Node AG-UI agent (the real @ag-ui/encoder), against a real
// redis-server. Both agents are unchanged: each run sends a few whole-state
// snapshots computed from RunAgentInput.state. Over seeded sequences of runs,
// each on an instance picked at random, by one client that follows the thread
// and another that falls behind:
//  - after every run the client is synced at the store's seq, on the store's
//    state (a Node emitter opened on the key reads it), and its seq only grows:
//    the two instances continue one line, never a fork;
//  - a client that fell behind catches up on either instance by replay: every
//    state event it gets up to the line's seq is a delta. (Its run then starts
//    from the stale state it sent, which the instance writes out of step: that
//    part is not the catch-up.) The state is ~40 KB, so that a replay of the
//    missed deltas is cheaper than a snapshot (the emitter's snapshotRatio).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { EventEncoder } from '@ag-ui/encoder';
import { prng } from '../../support/fault-link.mjs';
import { jsDir, plain } from '../../js/support.mjs';
import { RedisServer } from '../../js/redis-support.mjs';
import { startPythonServer } from './python-server.mjs';

const { StateSyncHttpAgent } = await import(join(jsDir, 'src', 'ag-ui.js'));
const { createStateSyncProxy } = await import(join(jsDir, 'src', 'proxy.js'));
const { createStateEmitter } = await import(join(jsDir, 'src', 'index.js'));
const { redisStore } = await import(join(jsDir, 'src', 'server.js'));

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';
const PREFIX = 'fleet:';
const STEPS = 3;
const T = { timeout: 180000 };

let redis;
let python;
let upstream;
let proxy;

/** An unchanged AG-UI agent in Node: STEPS snapshots from RunAgentInput.state, then RUN_FINISHED. */
async function startNodeAgent() {
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const input = JSON.parse(body);
    const encoder = new EventEncoder({ accept: req.headers.accept });
    res.writeHead(200, { 'content-type': encoder.getContentType() });
    res.write(encoder.encode({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId }));
    let state = input.state ?? {};
    for (let i = 0; i < STEPS; i++) {
      state = { ...state, node: (state.node ?? 0) + 1, last: input.runId };
      res.write(encoder.encode({ type: 'STATE_SNAPSHOT', snapshot: state }));
    }
    res.end(encoder.encode({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/agent`, close: () => new Promise((resolve) => server.close(resolve)) };
}

async function startProxy(upstreamUrl, url) {
  const store = redisStore({ url, prefix: PREFIX });
  const handler = createStateSyncProxy({ upstream: upstreamUrl, store });
  const server = createServer((req, res) => handler(req, res));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/agent`,
    async close() {
      handler.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await store.close();
    },
  };
}

async function startPython(url) {
  const server = await startPythonServer('store_server.py', [url, PREFIX]);
  return { url: `http://127.0.0.1:${server.port}/agent`, close: () => server.close() };
}

/** The thread as the store holds it: a Node emitter opened on its key. */
async function stored(threadId) {
  const store = redisStore({ url: redis.url, prefix: PREFIX });
  const emitter = await createStateEmitter({ store, key: threadId });
  const line = { seq: emitter.seq, epoch: emitter.epoch, state: plain(emitter.state) };
  emitter.dispose();
  await store.close();
  return line;
}

before(async () => {
  redis = await RedisServer.start();
  upstream = await startNodeAgent();
  [proxy, python] = await Promise.all([startProxy(upstream.url, redis.url), startPython(redis.url)]);
});
after(async () => {
  await Promise.all([proxy?.close(), python?.close(), upstream?.close()]);
  await redis?.close();
});

async function runOn(agent, instance, runId) {
  agent.url = instance.url;
  await agent.runAgent({ runId });
  assert.equal(agent.stateSync.status, 'synced', `${runId} ends synced`);
}

for (const seed of [1, 2, 3]) {
  test(`seed ${seed}: runs on either instance continue one line; clients behind catch up on either by replay`, T, async () => {
    const random = prng(seed);
    const threadId = `fleet-${seed}-${Date.now()}`;
    const instances = { node: proxy, python };
    // A state of some size: a few changed fields cost less as a delta than the whole (snapshotRatio).
    const initialState = { doc: 'paragraph '.repeat(4000) };
    const follower = new StateSyncHttpAgent({ url: proxy.url, threadId, initialState });
    // Two clients fall behind after run 1; at the end each catches up on one instance.
    const behind = Object.fromEntries(['node', 'python'].map((name) => {
      const received = []; // the state events it applied: [type, seq]
      const agent = new StateSyncHttpAgent({ url: proxy.url, threadId, initialState,
        stateSync: { onOutcome: (o) => { if (o.kind === 'applied' && o.type.startsWith('STATE_')) received.push([o.type, o.seq]); } } });
      return [name, { agent, received }];
    }));
    await Promise.all([follower.ready, ...Object.values(behind).map((b) => b.agent.ready)]);
    let lastSeq = -1;
    for (let i = 0; i < 8; i++) {
      const writer = random() < 0.5 ? 'node' : 'python';
      await runOn(follower, instances[writer], `${threadId}-r${i}`);
      const line = await stored(threadId);
      assert.ok(follower.stateSync.lastSeq > lastSeq, `run ${i} (${writer}): the seq grows (${lastSeq} -> ${follower.stateSync.lastSeq})`);
      lastSeq = follower.stateSync.lastSeq;
      assert.deepEqual([follower.stateSync.lastSeq, follower.stateSync.epoch], [line.seq, line.epoch], `run ${i} (${writer}): at the store's seq`);
      assert.deepEqual(plain(follower.state), line.state, `run ${i} (${writer}): on the store's state`);
      if (i === 1) for (const b of Object.values(behind)) await runOn(b.agent, instances[writer], `${threadId}-${b === behind.node ? 'n' : 'p'}0`);
    }
    for (const [name, { agent, received }] of Object.entries(behind)) {
      const { seq: lineSeq } = await stored(threadId);
      assert.ok(agent.stateSync.lastSeq < lineSeq, `the client behind missed events (${name})`);
      received.length = 0;
      // Its run starts from the stale state it sends; the catch-up brings it to the line first.
      await runOn(agent, instances[name], `${threadId}-${name}1`);
      const caughtUp = received.filter(([, seq]) => seq !== null && seq <= lineSeq);
      assert.ok(caughtUp.length > 0 && caughtUp.at(-1)[1] === lineSeq, `the catch-up on ${name} reached seq ${lineSeq}: ${JSON.stringify(received)}`);
      assert.deepEqual(caughtUp.filter(([type]) => type !== 'STATE_DELTA'), [], `the catch-up on ${name} was a replay: ${JSON.stringify(received)}`);
      const line = await stored(threadId);
      assert.deepEqual([agent.stateSync.lastSeq, plain(agent.state)], [line.seq, line.state], `it ends on the store's line (${name})`);
      agent.dispose();
    }
    follower.dispose();
  });
}
