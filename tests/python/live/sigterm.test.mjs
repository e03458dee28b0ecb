// SIGTERM on a Python instance (issue 26, item 4): StateSyncMiddleware on a
// Redis store under uvicorn (tests/python/live/drain_server.py), two instances
// on one redis-server. A run is in progress on A (its agent waits for the
// test's SIGUSR1) when A gets SIGTERM:
//  - A stops accepting at once: a new connection is refused;
//  - the run in progress goes on and ends (RUN_FINISHED), and only then A
//    exits (uvicorn re-raises the SIGTERM once it has shut down);
//  - when the run outlasts the graceful shutdown instead, A cuts it and exits,
//    and the client's next run, on B, continues the thread's line: same epoch,
//    caught up without a snapshot, on the state A last committed.
// Every wait is for the condition itself.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { jsDir, plain } from '../../js/support.mjs';
import { RedisServer } from '../../js/redis-support.mjs';
import { until } from '../../support/until.mjs';
import { startPythonServer } from './python-server.mjs';

const { StateSyncHttpAgent } = await import(join(jsDir, 'src', 'ag-ui.js'));

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';
const T = { timeout: 120000 };
const BRIEF = 'plan '.repeat(800); // drain_server.py's

let redis;
before(async () => { redis = await RedisServer.start(); });
after(async () => { await redis?.close(); });

/** A Python instance on `prefix`, its runs 'held' until it gets SIGUSR1 or 'free'; `grace`: uvicorn's graceful shutdown (s). */
async function instance(t, prefix, hold, grace) {
  const server = await startPythonServer('drain_server.py', [redis.url, prefix, hold, String(grace)]);
  t.after(() => server.close());
  return { ...server, url: `http://127.0.0.1:${server.port}/agent` };
}

// uvicorn's own end after a SIGTERM: exit 0, or the signal raised again once it shut down (as it does).
const shutDown = (exited) => exited.code === 0 || exited.signal === 'SIGTERM';
const refused = (url) => fetch(url, { method: 'GET' }).then(() => false, () => true);

function watch() {
  const seen = [];
  return { seen, subscriber: { onEvent: ({ event }) => { seen.push(event.type); } } };
}

test('SIGTERM: A stops accepting, the run in progress ends on A, then A exits', T, async (t) => {
  const a = await instance(t, 'drain1:', 'held', 60);
  const agent = new StateSyncHttpAgent({ url: a.url, threadId: 't-drain' });
  await agent.ready;
  const { seen, subscriber } = watch();
  const run = agent.runAgent({ runId: 'r1' }, subscriber);
  await until(() => agent.state?.step === 1, 'the run to be in progress');
  a.signal('SIGTERM');
  await until(() => refused(a.url), 'A to stop accepting');
  assert.equal(seen.includes('RUN_FINISHED'), false, 'the run is still going');
  assert.equal(a.exited(), null, 'A waits for it');
  a.signal('SIGUSR1'); // the agent ends its run
  await run;
  assert.equal(seen.filter((type) => type === 'RUN_FINISHED').length, 1);
  assert.equal(agent.stateSync.status, 'synced');
  assert.deepEqual(plain(agent.state), { brief: BRIEF, step: 2, last: 'r1' });
  const exited = await until(() => a.exited(), 'A to exit');
  assert.ok(shutDown(exited), `${JSON.stringify(exited)}: ${a.stderr()}`);
  agent.dispose();
});

test('SIGTERM past the graceful shutdown: A cuts the run; the next run on B continues the line, caught up without a snapshot', T, async (t) => {
  const [a, b] = await Promise.all([instance(t, 'drain2:', 'held', 1), instance(t, 'drain2:', 'free', 60)]);
  const agent = new StateSyncHttpAgent({ url: a.url, threadId: 't-drain-2', stateSync: { backoff: { initialMs: 5, maxMs: 50 } } });
  await agent.ready;
  const run = agent.runAgent({ runId: 'r1' }, watch().subscriber);
  await until(() => agent.state?.step === 1, 'the run to be in progress');
  const { lastSeq, epoch } = agent.stateSync;
  a.signal('SIGTERM');
  const exited = await until(() => a.exited(), 'A to exit after its graceful shutdown');
  assert.ok(shutDown(exited), JSON.stringify(exited));
  // The cut run: the client stops retrying A (a Python instance does not resume a stream; the next run catches up).
  agent.abortRun();
  await run.catch(() => {});
  agent.url = b.url;
  const { seen, subscriber } = watch();
  await agent.runAgent({ runId: 'r2' }, subscriber);
  assert.equal(agent.stateSync.status, 'synced');
  assert.equal(agent.stateSync.epoch, epoch, 'the same line');
  assert.ok(agent.stateSync.lastSeq > lastSeq);
  assert.equal(seen.includes('STATE_SNAPSHOT'), false, 'caught up by replay or current, never a snapshot');
  assert.deepEqual(plain(agent.state), { brief: BRIEF, step: 3, last: 'r2' }, 'B ran on the state A committed');
  agent.dispose();
});
