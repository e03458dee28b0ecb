// Memory: 1,000,000 STATE_DELTA events through one WASM engine. Reports the
// WASM heap in use (malloc'd bytes), the WASM memory size and the JS heap at
// checkpoints, so a leak shows as growth. Not a test: it prints.
//
//   node --expose-gc bench/js/bench_memory.mjs [events=1000000]
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const { createStateSync } = await import(join(here, '..', '..', 'js', 'src', 'index.js'));
const { kInternals } = await import(join(here, '..', '..', 'js', 'src', 'engine', 'internals.js'));

const total = Number(process.argv[2] ?? 1_000_000);
const sync = await createStateSync();
const { engine } = sync[kInternals]();
const enc = new TextEncoder();
const state = { proposal: { recipient: 'alice', amount: 0 }, todos: Array.from({ length: 50 }, (_, i) => ({ id: i, done: false })) };
sync.feed(`data: ${JSON.stringify({ type: 'STATE_SNAPSHOT', snapshot: state, metadata: { seq: 0 } })}\n\n`);

const mb = (n) => (n / 1048576).toFixed(2);
const rows = [];
const sample = (events) => {
  globalThis.gc?.();
  rows.push({
    events,
    'wasm heap in use MB': mb(engine.heapBytesInUse()),
    'wasm memory MB': mb(engine.memoryBytes ?? 0),
    'JS heap MB': mb(process.memoryUsage().heapUsed),
    status: sync.status,
  });
};
sample(0);
const batch = 100;
const t0 = performance.now();
for (let seq = 1; seq <= total; seq += batch) {
  let text = '';
  for (let s = seq; s < seq + batch && s <= total; s++) {
    const ops = s % 3 === 0
      ? [{ op: 'add', path: '/todos/-', value: { id: s, done: false } }, { op: 'remove', path: '/todos/0' }]
      : [{ op: 'replace', path: `/todos/${s % 50}/done`, value: s % 2 === 0 }, { op: 'replace', path: '/proposal/amount', value: s }];
    text += `data: ${JSON.stringify({ type: 'STATE_DELTA', delta: ops, metadata: { seq: s, baseSeq: s - 1 } })}\n\n`;
  }
  sync.feed(enc.encode(text));
  const done = Math.min(seq + batch - 1, total);
  if (done % (total / 10) === 0) sample(done);
}
const secs = (performance.now() - t0) / 1000;
console.log(`bench_memory: ${total} deltas through one engine in ${secs.toFixed(1)} s (${Math.round(total / secs)} events/s)`);
console.table(rows);
const first = Number(rows[1]['wasm heap in use MB']), last = Number(rows.at(-1)['wasm heap in use MB']);
console.log(`wasm heap growth from 10% to 100%: ${(last - first).toFixed(2)} MB (flat = no per-event leak)`);
if (sync.lastSeq !== total || sync.status !== 'synced') throw new Error('engine did not apply every delta');
sync.dispose();
