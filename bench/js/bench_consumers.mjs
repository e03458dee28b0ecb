// Consumer benchmark: the same SSE bytes, the same seeded chunking, four
// consumers interleaved in one process (not a test; it prints a table).
//   (a) @ag-ui/client 1.0: transformHttpEventStream + defaultApplyEvents
//   (b) the AG-UI state docs' handler: eventsource-parser + JSON.parse +
//       fast-json-patch applyPatch(state, delta, true, false)
//   (c) the floor: eventsource-parser + JSON.parse only
//   (d) agui-state-sync end to end: bytes in -> sync.state updated
//   (e) the floor plus an immutable apply in JS (this package's structural-
//       sharing mirror, with no engine and no checks): the price of the
//       "never mutated in place" contract alone, which (d) pays too
// Workloads come from build/native/workload_dump (bench/workload.h), so native
// and JS benchmarks measure identical bytes.
//
//   node --expose-gc bench/js/bench_consumers.mjs [runs=5]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Subject } from 'rxjs';
import { createParser } from 'eventsource-parser';
import fastJsonPatch from 'fast-json-patch';
import { transformHttpEventStream, defaultApplyEvents, AbstractAgent } from '@ag-ui/client';
import { createStateSync } from '../../js/src/index.js';
import { applyDelta } from '../../js/src/shared/state-mirror.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const dump = join(root, 'build', 'native', 'workload_dump');
const runs = Number(process.argv[2] ?? 5);

function workload(stateBytes) {
  return new Uint8Array(execFileSync(dump, [String(stateBytes), '2000', '42'], { maxBuffer: 1 << 28 }));
}

// Seeded chunk boundaries of 1..4096 bytes (mulberry32).
function chunks(bytes, seed) {
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [];
  for (let pos = 0; pos < bytes.length; ) {
    const n = Math.min(bytes.length - pos, 1 + Math.floor(rand() * 4096));
    out.push(bytes.subarray(pos, pos + n));
    pos += n;
  }
  return out;
}

class BenchAgent extends AbstractAgent {
  run() {
    throw new Error('not used');
  }
}

// (b), (c), (e): eventsource-parser over TextDecoder text, then JSON.parse; they
// differ only in what they do with each parsed event.
function parserConsumer(onParsed) {
  return {
    setup() {
      const ctx = { state: null, last: null, decoder: new TextDecoder() };
      ctx.parser = createParser({ onEvent: (e) => onParsed(ctx, JSON.parse(e.data)) });
      return ctx;
    },
    feed(ctx, chunk) {
      ctx.parser.feed(ctx.decoder.decode(chunk, { stream: true }));
    },
    result: (ctx) => ctx.state,
  };
}

// Each consumer: setup() -> ctx (not timed), feed(ctx, chunk), result(ctx) -> final state.
const consumers = {
  'a @ag-ui/client': {
    setup() {
      const agent = new BenchAgent({ initialState: {} });
      const http = new Subject();
      const events = transformHttpEventStream(http);
      const input = { threadId: 't', runId: 'r', state: {}, messages: [], tools: [], context: [], forwardedProps: {} };
      const ctx = { http, state: null };
      // The client applies asynchronously (per-event promises for subscribers),
      // so its time runs until the pipeline has drained the whole stream.
      ctx.done = new Promise((resolve, reject) => {
        defaultApplyEvents(input, events, agent, []).subscribe({
          next: (m) => {
            if (m.state !== undefined) ctx.state = m.state;
          },
          error: reject,
          complete: resolve,
        });
      });
      http.next({ type: 'headers', status: 200, headers: new Headers({ 'content-type': 'text/event-stream' }) });
      return ctx;
    },
    feed(ctx, chunk) {
      ctx.http.next({ type: 'data', data: chunk });
    },
    // The client applies on later ticks: the snapshot phase ends when it has.
    async settle(ctx) {
      while (ctx.state === null) await new Promise((resolve) => setImmediate(resolve));
    },
    async finish(ctx) {
      ctx.http.complete();
      await ctx.done;
    },
    result: (ctx) => ctx.state,
  },
  'b docs handler': parserConsumer((ctx, ev) => {
    if (ev.type === 'STATE_SNAPSHOT') ctx.state = ev.snapshot;
    else if (ev.type === 'STATE_DELTA') {
      try {
        ctx.state = fastJsonPatch.applyPatch(ctx.state, ev.delta, true, false).newDocument;
      } catch (err) {
        console.warn('patch failed', err.message);
      }
    }
  }),
  'c floor': parserConsumer((ctx, ev) => {
    ctx.last = ev;
  }),
  'e floor + immutable apply': parserConsumer((ctx, ev) => {
    if (ev.type === 'STATE_SNAPSHOT') ctx.state = ev.snapshot;
    else if (ev.type === 'STATE_DELTA') ctx.state = applyDelta(ctx.state, ev.delta);
  }),
  'd agui-state-sync': {
    async setup() {
      return { sync: await createStateSync() };
    },
    feed(ctx, chunk) {
      ctx.sync.feed(chunk);
    },
    result(ctx) {
      const s = ctx.sync.state;
      ctx.sync.dispose();
      return s;
    },
  },
};

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];

// Times the snapshot's chunks and the deltas' chunks separately: "per delta"
// is the steady-state cost the targets speak of, without one big snapshot
// parse spread over the 2,000 deltas (which alone makes the floor 2x slower at 500 KB).
async function measure(c, snapshotParts, deltaParts) {
  globalThis.gc?.();
  const ctx = await c.setup();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const feedAll = (parts) => {
    for (let i = 0; i < parts.length; i++) {
      c.feed(ctx, parts[i]);
      if ((i & 63) === 0) peak = Math.max(peak, process.memoryUsage().rss);
    }
  };
  const t0 = performance.now();
  feedAll(snapshotParts);
  if (c.settle) await c.settle(ctx);
  const t1 = performance.now();
  feedAll(deltaParts);
  if (c.finish) await c.finish(ctx);
  const t2 = performance.now();
  peak = Math.max(peak, process.memoryUsage().rss);
  const deltas = deltaParts.events;
  return {
    usEvent: ((t2 - t0) * 1000) / (deltas + 1),
    usDelta: ((t2 - t1) * 1000) / deltas,
    peakMB: (peak - rss0) / 1048576,
    state: c.result(ctx),
  };
}

console.log(`bench_consumers: 2000 STATE_DELTA events after one snapshot, seeded 1-4096 B chunks, median of ${runs} interleaved runs`);
const wasmDir = join(root, 'js', 'wasm');
const wasmGz = gzipSync(readFileSync(join(wasmDir, 'agui_sync.wasm'))).length;
const glueGz = gzipSync(readFileSync(join(wasmDir, 'agui_sync.mjs'))).length;
console.log(`package engine size: agui_sync.wasm ${wasmGz} B + glue ${glueGz} B gzipped = ${((wasmGz + glueGz) / 1024).toFixed(1)} KiB (target <= 100 KB)`);
const rows = [];
const perDelta = {};
const perDeltaImmutable = {};
for (const size of [5000, 50000, 500000]) {
  const bytes = workload(size);
  // The snapshot frame and the delta frames are chunked separately (same seeded
  // chunker), so the two phases can be timed apart.
  const snapshotEnd = bytes.indexOf(10, bytes.indexOf(10) + 1) + 1; // the snapshot frame ends at its blank line
  const snapshotParts = chunks(bytes.subarray(0, snapshotEnd), 7);
  const deltaParts = chunks(bytes.subarray(snapshotEnd), 8);
  deltaParts.events = 2000;
  const times = Object.fromEntries(Object.keys(consumers).map((k) => [k, { event: [], delta: [] }]));
  const peaks = Object.fromEntries(Object.keys(consumers).map((k) => [k, 0]));
  const finals = {};
  // Round -1 warms the JIT on these bytes and is not counted (without it the
  // first size measured pays every consumer's compilation).
  for (let r = -1; r < runs; r++) {
    for (const [name, c] of Object.entries(consumers)) {
      const m = await measure(c, snapshotParts, deltaParts);
      if (r < 0) continue;
      times[name].event.push(m.usEvent);
      times[name].delta.push(m.usDelta);
      peaks[name] = Math.max(peaks[name], m.peakMB);
      finals[name] = m.state;
    }
  }
  // Every state-applying consumer must end in the same state, or the timing means nothing.
  const ref = JSON.stringify(finals['b docs handler']);
  for (const k of ['a @ag-ui/client', 'd agui-state-sync', 'e floor + immutable apply'])
    if (JSON.stringify(finals[k]) !== ref) throw new Error(`${k} disagrees with the docs handler at ${size} B`);
  for (const name of Object.keys(consumers)) {
    const us = median(times[name].event);
    rows.push({
      state: `${size / 1000}KB`,
      consumer: name,
      'us/event': us.toFixed(2),
      'us/delta': median(times[name].delta).toFixed(2),
      'events/s': Math.round(1e6 / us),
      'peak RSS +MB': peaks[name].toFixed(1),
    });
  }
  const floor = times['c floor'], ours = times['d agui-state-sync'];
  perDelta[size] = median(ours.delta);
  perDeltaImmutable[size] = median(times['e floor + immutable apply'].delta);
  rows.push({
    state: `${size / 1000}KB`,
    consumer: 'd / c (target <= 2x)',
    'us/event': (median(ours.event) / median(floor.event)).toFixed(2) + 'x',
    'us/delta': (median(ours.delta) / median(floor.delta)).toFixed(2) + 'x',
  });
}
console.table(rows);
console.log(`agui-state-sync per delta, 500 KB / 5 KB: ${(perDelta[500000] / perDelta[5000]).toFixed(2)}x (target <= 1.5x)`);
console.log(`  the same ratio for (e), the immutable apply with no engine: ${(perDeltaImmutable[500000] / perDeltaImmutable[5000]).toFixed(2)}x; ` +
  `(d) - (e) per delta: ${[5000, 500000].map((n) => (perDelta[n] - perDeltaImmutable[n]).toFixed(2)).join(' / ')} us at 5 / 500 KB`);

// One 4 MB snapshot: ours vs the floor.
{
  const big = { doc: Array.from({ length: 20000 }, (_, i) => ({ id: i, text: 'section text '.repeat(12), done: i % 3 === 0 })) };
  const frame = new TextEncoder().encode(`data: ${JSON.stringify({ type: 'STATE_SNAPSHOT', snapshot: big, metadata: { seq: 1 } })}\n\n`);
  const parts = chunks(frame, 3);
  const t = { floor: [], ours: [] };
  for (let r = 0; r < runs; r++) {
    t.floor.push((await measure(consumers['c floor'], parts, Object.assign([], { events: 0 }))).usEvent);
    const sync = await createStateSync({ maxEventBytes: 16 << 20 });
    const t0 = performance.now();
    for (const p of parts) sync.feed(p);
    t.ours.push((performance.now() - t0) * 1000);
    if (sync.state.doc.length !== 20000) throw new Error('snapshot not applied');
    sync.dispose();
  }
  const f = median(t.floor), o = median(t.ours);
  console.log(`4 MB snapshot (${(frame.length / 1048576).toFixed(1)} MiB): floor ${(f / 1000).toFixed(1)} ms, agui-state-sync ${(o / 1000).toFixed(1)} ms = ${(o / f).toFixed(2)}x (target <= 3x)`);
}
