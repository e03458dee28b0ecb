// Fan-out and reconnect storm (issue 17, section 4). Not a test: it prints.
//
//   node --expose-gc bench/js/bench_fanout.mjs [clients=1000] [seconds=60] [stores=bare,memory,redis]
//
// One Node server instance (a child process of this one, so its CPU time and
// memory are its own) serves `clients` SSE clients on 127.0.0.1. Each client
// is a real engine (createStateSync) fed by its own HTTP connection, all in
// this process. The server updates the state every 100 ms for `seconds`,
// encodes each event once and writes the same bytes to every client. Then all
// clients drop their connections, the server sends 5 more updates, and all
// reconnect at once saying where they are (X-AGUI-State-Seq / -Epoch).
// Reported per store (memory: an emitter without a store, today's default;
// redis: bound to a key in a redis-server started here on a free port):
//  - server CPU per event (process.cpuUsage of the server over the run / events);
//  - memory per connected idle client (server heap + external, and RSS, with
//    every client connected minus before, after a GC, / clients; "before" is
//    taken after a warm-up: a tenth as many clients connect and leave first);
//  - fan-out latency from update() to the last client's feed() of that event, p50/p99;
//  - the storm: catch-up time per client (request to caught up), p50/p99,
//    the whole storm's duration, the bytes sent, and the catch-up modes.
// Goals (issue 17): memory per idle client <= 20 KB; fan-out p99 <= 50 ms;
// the storm served entirely by replays, in <= 2 s. Store 'bare' (issue 27,
// item 5) is a plain Node http SSE server holding the same idle connections,
// measured side by side: its memory per idle client is the physical limit
// (goal: ours <= 1.1x of it); it has no run and no storm.
import { fork } from 'node:child_process';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const INTERVAL_MS = 100;
const STORM_UPDATES = 5;

if (process.argv[2] === '--server-child') await import('./bench_fanout_server.mjs');
else await main();

async function main() {
  const clients = Number(process.argv[2] ?? 1000);
  const seconds = Number(process.argv[3] ?? 60);
  const stores = (process.argv[4] ?? 'bare,memory,redis').split(',');
  const { RedisServer } = await import(join(root, 'tests', 'js', 'redis-support.mjs'));
  const results = [];
  for (const store of stores) {
    const redis = store === 'redis' ? await RedisServer.start() : null;
    try {
      results.push(await runOne({ store, redisUrl: redis?.url, clients, seconds }));
    } finally {
      await redis?.close();
    }
  }
  console.log(`\nfan-out: ${clients} SSE clients, an update every ${INTERVAL_MS} ms for ${seconds} s, then all reconnect after ${STORM_UPDATES} missed updates`);
  console.table(results);
}

// One store: the server child, the clients, the run, the storm.
async function runOne({ store, redisUrl, clients, seconds }) {
  const server = await startServer(store, redisUrl);
  const { createStateSync } = await import(join(root, 'js', 'src', 'index.js'));
  await warmUp(server, createStateSync, Math.max(100, Math.ceil(clients / 10)));
  const idleBefore = await server.call({ cmd: 'memory' });
  const fleet = [];
  for (let i = 0; i < clients; i++) fleet.push({ sync: await createStateSync(), latencies: null });
  await Promise.all(fleet.map((c) => connect(server.port, c, {})));
  const idleAfter = await server.call({ cmd: 'memory' });
  const idle = {
    store,
    'heap+ext/client (KB)': round((idleAfter.heap - idleBefore.heap) / clients / 1024, 1),
    'rss/client (KB)': round((idleAfter.rss - idleBefore.rss) / clients / 1024, 1),
  };
  if (store === 'bare') {
    for (const c of fleet) { c.req?.destroy(); c.sync.dispose(); }
    await server.stop();
    return idle;
  }
  const arrivals = new Map(); // t (update time) -> latest feed time
  for (const c of fleet) c.onState = (t) => arrivals.set(t, Math.max(arrivals.get(t) ?? 0, now()));
  const run = await server.call({ cmd: 'run', seconds, intervalMs: INTERVAL_MS });
  await sleep(500); // the last event's arrivals
  const latencies = [...arrivals].map(([t, last]) => last - t).sort((a, b) => a - b);
  const storm = await reconnectStorm(server, fleet);
  for (const c of fleet) { c.req?.destroy(); c.sync.dispose(); }
  await server.stop();
  return {
    ...idle,
    events: run.events,
    'server CPU/event (ms)': round(run.cpuMs / run.events, 3),
    'fan-out p50 (ms)': round(percentile(latencies, 0.5), 1),
    'fan-out p99 (ms)': round(percentile(latencies, 0.99), 1),
    ...storm,
  };
}

// Before the "idle before" figure, a tenth as many clients connect and leave:
// what a server pays once (its code compiled, Node's parser and socket pools
// filled, the heap's first growth) is then not counted per client. Both
// servers get the same warm-up, so the ratio compares what each client adds.
async function warmUp(server, createStateSync, count) {
  const warm = [];
  for (let i = 0; i < count; i++) warm.push({ sync: await createStateSync() });
  await Promise.all(warm.map((c) => connect(server.port, c, {})));
  for (const c of warm) { c.req.destroy(); c.sync.dispose(); }
  const deadline = Date.now() + 30000;
  while ((await server.call({ cmd: 'clients' })).count > 0) {
    if (Date.now() > deadline) throw new Error('warm-up clients did not leave the server within 30 s');
    await new Promise((r) => setImmediate(r));
  }
}

// All clients drop their streams, miss STORM_UPDATES updates, and reconnect at once.
async function reconnectStorm(server, fleet) {
  for (const c of fleet) c.req.destroy();
  await sleep(200);
  const { seq } = await server.call({ cmd: 'updates', count: STORM_UPDATES });
  await server.call({ cmd: 'reset-counters' });
  const started = now();
  const times = await Promise.all(fleet.map((c) => {
    const t0 = now();
    return connect(server.port, c, { seq: c.sync.lastSeq, epoch: c.sync.epoch }, seq).then(() => now() - t0);
  }));
  const total = now() - started;
  const served = await server.call({ cmd: 'counters' });
  times.sort((a, b) => a - b);
  return {
    'storm p50 (ms)': round(percentile(times, 0.5), 1),
    'storm p99 (ms)': round(percentile(times, 0.99), 1),
    'storm total (ms)': round(total, 0),
    'storm bytes': served.bytes,
    'storm modes': Object.entries(served.modes).map(([m, n]) => `${m}:${n}`).join(' '),
  };
}

// Opens a client's stream; resolves once its engine holds `untilSeq` (default: the first state).
function connect(port, client, position, untilSeq = null) {
  const headers = {};
  if (position.seq !== undefined && position.seq !== null) headers['x-agui-state-seq'] = String(position.seq);
  if (position.epoch) headers['x-agui-state-epoch'] = position.epoch;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/stream', headers, agent: false }, (res) => {
      res.on('data', (chunk) => {
        const before = client.sync.state?.t;
        client.sync.feed(chunk);
        const t = client.sync.state?.t;
        if (t !== before && client.onState) client.onState(t);
        if (client.sync.lastSeq !== null && (untilSeq === null || client.sync.lastSeq >= untilSeq)) resolve();
      });
    });
    req.on('error', (error) => (client.req === req ? reject(error) : undefined));
    client.req = req;
    req.end();
  });
}

async function startServer(store, redisUrl) {
  const child = fork(fileURLToPath(import.meta.url), ['--server-child', store, redisUrl ?? ''], { execArgv: ['--expose-gc'] });
  const pending = new Map();
  let nextId = 0;
  child.on('message', (m) => {
    if (m.id !== undefined) pending.get(m.id)?.(m);
    pending.delete(m.id);
  });
  const call = (message) => new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    child.send({ ...message, id });
  });
  const { port } = await call({ cmd: 'listen' });
  return { port, call, stop: () => new Promise((resolve) => { child.once('exit', resolve); child.kill(); }) };
}

function now() {
  return performance.timeOrigin + performance.now();
}
function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}
function round(x, digits) {
  return Math.round(x * 10 ** digits) / 10 ** digits;
}
function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN;
}
