// Consumer benchmark: the same SSE bytes, the same seeded chunking, four
// consumers interleaved in one process (not a test; it prints a table).
//   (a) @ag-ui/client 1.0: transformHttpEventStream + defaultApplyEvents
//   (b) the AG-UI state docs' handler: eventsource-parser + JSON.parse +
//       fast-json-patch applyPatch(state, delta, true, false)
//   (c) the floor: eventsource-parser + JSON.parse only
//   (d) agui-state-sync end to end: bytes in -> sync.state updated
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
    async finish(ctx) {
      ctx.http.complete();
      await ctx.done;
    },
    result: (ctx) => ctx.state,
  },
  'b docs handler': {
    setup() {
      const ctx = { state: null, decoder: new TextDecoder() };
      ctx.parser = createParser({
        onEvent(e) {
          const ev = JSON.parse(e.data);
          if (ev.type === 'STATE_SNAPSHOT') ctx.state = ev.snapshot;
          else if (ev.type === 'STATE_DELTA') {
            try {
              ctx.state = fastJsonPatch.applyPatch(ctx.state, ev.delta, true, false).newDocument;
            } catch (err) {
              console.warn('patch failed', err.message);
            }
          }
        },
      });
      return ctx;
    },
    feed(ctx, chunk) {
      ctx.parser.feed(ctx.decoder.decode(chunk, { stream: true }));
    },
    result: (ctx) => ctx.state,
  },
  'c floor': {
    setup() {
      const ctx = { last: null, decoder: new TextDecoder() };
      ctx.parser = createParser({ onEvent: (e) => (ctx.last = JSON.parse(e.data)) });
      return ctx;
    },
    feed(ctx, chunk) {
      ctx.parser.feed(ctx.decoder.decode(chunk, { stream: true }));
    },
    result: () => null,
  },
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

async function measure(name, c, parts, events) {
  globalThis.gc?.();
  const ctx = await c.setup();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const t0 = performance.now();
  for (let i = 0; i < parts.length; i++) {
    c.feed(ctx, parts[i]);
    if ((i & 63) === 0) peak = Math.max(peak, process.memoryUsage().rss);
  }
  if (c.finish) await c.finish(ctx);
  const us = ((performance.now() - t0) * 1000) / events;
  peak = Math.max(peak, process.memoryUsage().rss);
  return { us, peakMB: (peak - rss0) / 1048576, state: c.result(ctx) };
}

console.log(`bench_consumers: 2000 STATE_DELTA events after one snapshot, seeded 1-4096 B chunks, median of ${runs} interleaved runs`);
const wasmDir = join(root, 'js', 'wasm');
const wasmGz = gzipSync(readFileSync(join(wasmDir, 'agui_sync.wasm'))).length;
const glueGz = gzipSync(readFileSync(join(wasmDir, 'agui_sync.mjs'))).length;
console.log(`package engine size: agui_sync.wasm ${wasmGz} B + glue ${glueGz} B gzipped = ${((wasmGz + glueGz) / 1024).toFixed(1)} KiB (target <= 100 KB)`);
const rows = [];
for (const size of [5000, 50000, 500000]) {
  const bytes = workload(size);
  const parts = chunks(bytes, 7);
  const events = 2001;
  const times = Object.fromEntries(Object.keys(consumers).map((k) => [k, []]));
  const peaks = Object.fromEntries(Object.keys(consumers).map((k) => [k, 0]));
  const finals = {};
  for (let r = 0; r < runs; r++) {
    for (const [name, c] of Object.entries(consumers)) {
      const m = await measure(name, c, parts, events);
      times[name].push(m.us);
      peaks[name] = Math.max(peaks[name], m.peakMB);
      finals[name] = m.state;
    }
  }
  // Every state-applying consumer must end in the same state, or the timing means nothing.
  const ref = JSON.stringify(finals['b docs handler']);
  for (const k of ['a @ag-ui/client', 'd agui-state-sync'])
    if (JSON.stringify(finals[k]) !== ref) throw new Error(`${k} disagrees with the docs handler at ${size} B`);
  for (const name of Object.keys(consumers)) {
    const us = median(times[name]);
    rows.push({ state: `${size / 1000}KB`, consumer: name, 'us/event': us.toFixed(2), 'events/s': Math.round(1e6 / us), 'peak RSS +MB': peaks[name].toFixed(1) });
  }
  const floor = median(times['c floor']);
  const ours = median(times['d agui-state-sync']);
  rows.push({ state: `${size / 1000}KB`, consumer: 'd / c (target <= 2x)', 'us/event': (ours / floor).toFixed(2) + 'x' });
}
console.table(rows);

// One 4 MB snapshot: ours vs the floor.
{
  const big = { doc: Array.from({ length: 20000 }, (_, i) => ({ id: i, text: 'section text '.repeat(12), done: i % 3 === 0 })) };
  const frame = new TextEncoder().encode(`data: ${JSON.stringify({ type: 'STATE_SNAPSHOT', snapshot: big, metadata: { seq: 1 } })}\n\n`);
  const parts = chunks(frame, 3);
  const t = { floor: [], ours: [] };
  for (let r = 0; r < runs; r++) {
    t.floor.push((await measure('c', consumers['c floor'], parts, 1)).us);
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
