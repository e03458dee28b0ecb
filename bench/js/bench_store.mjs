// Store-bound emitters (issue 17): what one committed write costs, side by
// side in one run, at 5 / 50 / 500 KB of state:
//  - 'full': every append carries the whole state (a store without
//    incrementalState; what every store did before), and
//  - 'incremental': appends carry their events, the state only now and then,
// for memoryStore() and a redis-server started here (appendfsync always, as
// the tests run it). Each write is one small patch. Not a test: it prints
// the median µs per awaited patch() over `runs`, and the bytes sent.
// Then cross-instance delivery: how long after one instance's write another
// instance's subscriber has the event, polling (pollMs 100, a store without
// watch) and notified (watch: Redis pub/sub), side by side, p50 / p99.
//
//   node --expose-gc bench/js/bench_store.mjs [runs=3] [writes=300]
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { createStateEmitter } = await import(join(root, 'js', 'src', 'index.js'));
const { memoryStore, redisStore } = await import(join(root, 'js', 'src', 'server.js'));
const { RedisServer } = await import(join(root, 'tests', 'js', 'redis-support.mjs'));
const { storeOf } = await import(join(root, 'tests', 'js', 'store-support.mjs'));

const runs = Number(process.argv[2] ?? 3);
const writes = Number(process.argv[3] ?? 300);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function stateOf(kb) {
  const rows = Array.from({ length: Math.round(kb * 1024 / 100) }, (_, i) => ({ id: i, name: `row ${i} ${'x'.repeat(60)}`, done: false }));
  return { rows, counter: 0 };
}

// `raw` as a store that counts what its appends carry; `full`: it does not
// declare incrementalState, so the emitter sends the state every time.
function counted(raw, full) {
  const sent = { bytes: 0 };
  const store = storeOf(raw, {
    ...(full ? {} : { incrementalState: true }),
    append: (key, batch) => {
      sent.bytes += (batch.state?.length ?? 0) + batch.events.reduce((n, e) => n + e.text.length, 0);
      return raw.append(key, batch);
    },
  });
  return { store, sent };
}

async function once(raw, kb, full, key) {
  const { store, sent } = counted(raw, full);
  const emitter = await createStateEmitter({ store, key, initialState: stateOf(kb), snapshotRatio: 100 });
  globalThis.gc?.();
  const t0 = performance.now();
  for (let i = 0; i < writes; i++) await emitter.patch([{ op: 'replace', path: `/rows/${i % 50}/done`, value: i % 2 === 0 }]);
  const us = ((performance.now() - t0) / writes) * 1000;
  emitter.dispose();
  return { us, bytes: sent.bytes / writes };
}

async function row(name, raw, kb) {
  const cells = {};
  for (const mode of ['full', 'incremental']) {
    const samples = [];
    for (let r = 0; r < runs; r++) samples.push(await once(raw, kb, mode === 'full', `${name}-${kb}-${mode}-${r}`));
    cells[mode] = { us: median(samples.map((s) => s.us)), bytes: median(samples.map((s) => s.bytes)) };
  }
  const f = cells.full;
  const i = cells.incremental;
  console.log(`${name.padEnd(12)} ${String(kb).padStart(4)} KB   full ${f.us.toFixed(0).padStart(7)} µs ${Math.round(f.bytes).toString().padStart(8)} B/write   incremental ${i.us.toFixed(0).padStart(6)} µs ${Math.round(i.bytes).toString().padStart(6)} B/write   ${(f.us / i.us).toFixed(1)}x`);
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

// `n` writes by one instance, one every 20 ms; ms until a second instance's subscriber has each.
async function delivery(url, watched, n = 100) {
  const writerStore = redisStore({ url, prefix: 'bench:' });
  const readerRaw = redisStore({ url, prefix: 'bench:' });
  const reader = watched ? readerRaw : storeOf(readerRaw); // without watch(): it polls
  const key = `delivery-${watched}`;
  const writer = await createStateEmitter({ store: writerStore, key, initialState: stateOf(5) });
  const listener = await createStateEmitter({ store: reader, key });
  const sentAt = new Map();
  const lags = [];
  const off = listener.subscribe((events) => {
    for (const e of events) if (sentAt.has(e.metadata['agui-state-sync'].seq)) lags.push(performance.now() - sentAt.get(e.metadata['agui-state-sync'].seq));
  }, { pollMs: 100 });
  await new Promise((resolve) => setTimeout(resolve, 200));
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const [event] = await writer.patch([{ op: 'replace', path: '/counter', value: i }]);
    sentAt.set(event.metadata['agui-state-sync'].seq, t);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  off();
  writer.dispose();
  listener.dispose();
  await writerStore.close();
  await readerRaw.close();
  return lags;
}

const redis = await RedisServer.start();
const stores = [['memoryStore', memoryStore()], ['redisStore', redisStore({ url: redis.url, prefix: 'bench:' })]];
try {
  console.log(`${writes} awaited patch() per run, median of ${runs}`);
  for (const [name, raw] of stores) for (const kb of [5, 50, 500]) await row(name, raw, kb);
  console.log('cross-instance delivery over Redis (100 writes, one per 20 ms)');
  for (const watched of [false, true]) {
    const lags = await delivery(redis.url, watched);
    console.log(`  ${watched ? 'notified (pub/sub)' : 'polled every 100 ms'}: ${lags.length} delivered, p50 ${pct(lags, 0.5).toFixed(1)} ms, p99 ${pct(lags, 0.99).toFixed(1)} ms`);
  }
} finally {
  await stores[1][1].close();
  await redis.close();
}
