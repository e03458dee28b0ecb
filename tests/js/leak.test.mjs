// 10,000 x create/feed/dispose leaves the WASM heap flat.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { delta, kInternals, pkg, snapshot, sse } from './support.mjs';
import { until } from '../support/until.mjs';

const { createStateSync } = pkg;

const stream = new TextEncoder().encode(
  sse(snapshot({ todos: [{ id: 1, text: 'x'.repeat(200) }], meta: { n: 0 } }, 1), { id: 'a' }) +
    sse(delta([{ op: 'add', path: '/todos/-', value: { id: 2, text: 'y'.repeat(100) } }], 2)) +
    sse(delta([{ op: 'replace', path: '/meta/n', value: 5 }], 4)) + // held in the reorder window
    sse({ type: 'RUN_STARTED', runId: 'r' }) +
    'data: {"type":"STATE_DELTA","delta":[{"op":"add"}],"metadata":{"seq":5,"baseSeq":4}}\n\n' + // error
    'data: {"type":"STATE_DELTA","delta":[{"op":"add","path":"/partial"', // partial event left in the framer
);

async function cycle(withEnd) {
  const sync = await createStateSync({ initialState: { seed: [1, 2, 3] } });
  const outcomes = sync.feed(stream);
  if (outcomes.length < 4) throw new Error(`unexpected outcomes ${JSON.stringify(outcomes)}`);
  sync.subscribe(() => {});
  if (withEnd) sync.end();
  sync.metrics();
  sync.dispose();
}

test('10,000 create/feed/dispose cycles: malloc usage and memory size unchanged', async () => {
  const probe = await createStateSync();
  const { engine } = probe[kInternals]();
  for (let i = 0; i < 200; i++) await cycle(i % 2 === 0); // warm-up: let allocator pools settle
  const heapBefore = engine.heapBytesInUse();
  const memoryBefore = engine.memoryBytes;
  const started = Date.now();
  for (let i = 0; i < 10000; i++) await cycle(i % 2 === 0);
  const heapAfter = engine.heapBytesInUse();
  const memoryAfter = engine.memoryBytes;
  assert.equal(heapAfter, heapBefore, `malloc'd bytes grew from ${heapBefore} to ${heapAfter}`);
  assert.equal(memoryAfter, memoryBefore, `linear memory grew from ${memoryBefore} to ${memoryAfter}`);
  assert.ok(Date.now() - started < 60000, 'cycles too slow'); // a hang guard: 40 times what they take (1.5 s)
  probe.dispose();
});

test('a leaked (undisposed, collected) StateSync is freed by the finalizer', { skip: typeof globalThis.gc !== 'function' && 'run node with --expose-gc' }, async () => {
  const probe = await createStateSync();
  const { engine } = probe[kInternals]();
  const before = engine.heapBytesInUse();
  const leak = async () => {
    const s = await createStateSync();
    s.feed(stream);
  };
  for (let i = 0; i < 50; i++) await leak();
  // The finalizer runs some time after a collection: collect until the heap is back (or the deadline says it never was).
  await until(() => {
    globalThis.gc();
    return engine.heapBytesInUse() <= before;
  }, () => `the finalizer to free the leaked StateSyncs (${engine.heapBytesInUse()} bytes in use, ${before} before)`);
  assert.equal(engine.heapBytesInUse(), before);
  probe.dispose();
});
