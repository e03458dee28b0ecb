// Consumer benchmark: the same SSE bytes, the same seeded chunking, the
// consumers interleaved in one process (not a test; it prints tables).
//   (a) @ag-ui/client 1.0: transformHttpEventStream + defaultApplyEvents
//   (b) the AG-UI state docs' handler: eventsource-parser + JSON.parse +
//       fast-json-patch applyPatch(state, delta, true, false)
//   (c) the floor: eventsource-parser + JSON.parse only
//   (d) agui-state-sync end to end: bytes in -> sync.state updated
//   (e) the floor plus an immutable apply in JS (this package's structural-
//       sharing mirror, with no engine and no checks): the price of the
//       "never mutated in place" contract alone, which (d) pays too. (e) is
//       the contract limit (issue 27): the goal is (d) <= 1.3x (e).
//   (w) (d)'s WebAssembly engine alone, its Result unread: (d) - (w) is the JS side
// Workloads come from build/native/workload_dump (bench/workload.h), so native
// and JS benchmarks measure identical state changes. Each is sent in two
// stream shapes, derived from the same events:
//   metadata  our emitter's: a stamped snapshot, deltas with seq/baseSeq under
//             metadata["agui-state-sync"] (docs/wire.md section 10)
//   seed      the seed article's backend: an unstamped snapshot, then deltas
//             with top-level seq/base_seq from base_seq 0 (docs/wire.md section 6)
//
//   node --expose-gc bench/js/bench_consumers.mjs [runs=5] [--only=c,d,e] [--sizes=5000,...] [--baseline=DIR]
// --only keeps the consumers whose letters are listed and --sizes the state
// sizes (quick A/B runs);
// --baseline=DIR adds (d0) and (w0), agui-state-sync and its engine alone
// loaded from DIR/src/index.js (a copy of another build's js/src and js/wasm),
// interleaved with (d) and (w) in the same process: before/after figures on
// the same machine state.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Subject } from 'rxjs';
import { createParser } from 'eventsource-parser';
import fastJsonPatch from 'fast-json-patch';
import { transformHttpEventStream, defaultApplyEvents, AbstractAgent } from '@ag-ui/client';
import { createStateSync } from '../../js/src/index.js';
import { applyDelta } from '../../js/src/shared/state-mirror.js';
import { WIRE_KEY } from '../../js/src/engine/codes.js';
import { kInternals } from '../../js/src/engine/internals.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const dump = join(root, 'build', 'native', 'workload_dump');
const args = process.argv.slice(2);
const flag = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const runs = Number(args.find((a) => !a.startsWith('--')) ?? 5);
const only = flag('only')?.split(',');
const baselineDir = flag('baseline');
const sizes = (flag('sizes') ?? '5000,50000,500000').split(',').map(Number);

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

// (d), (d0): a StateSync fed the bytes as they come.
function syncConsumer(create) {
  return {
    async setup() {
      return { sync: await create() };
    },
    feed(ctx, chunk) {
      ctx.sync.feed(chunk);
    },
    result(ctx) {
      const s = ctx.sync.state;
      ctx.sync.dispose();
      return s;
    },
  };
}

// (w): (d)'s WebAssembly engine with nothing around it: the bytes copied into
// its heap and fed, the Result left unread, no JS state. What (d) costs beyond
// it is the JS side (the Result's JSON.parse, the immutable mirror, the
// bookkeeping), which is (e)'s work less its SSE parser.
function engineConsumer(create = createStateSync, internals = kInternals) {
  return {
    async setup() {
      const sync = await create();
      const { engine } = sync[internals]();
      sync.dispose();
      return { engine, facade: new engine.SyncFacade('{}') };
    },
    feed({ engine, facade }, chunk) {
      const ptr = facade.inputBuffer(chunk.length);
      engine.heapU8.set(chunk, ptr); // read after inputBuffer(), which may grow memory
      facade.feedInput(chunk.length);
    },
    result({ facade }) {
      const state = JSON.parse(facade.stateJson());
      facade.delete();
      return state;
    },
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
  'd agui-state-sync': syncConsumer(createStateSync),
  'w engine alone': engineConsumer(),
};
if (baselineDir) {
  const baseline = await import(pathToFileURL(join(resolve(baselineDir), 'src', 'index.js')).href);
  consumers['d0 baseline'] = syncConsumer(baseline.createStateSync);
  const baselineInternals = await import(pathToFileURL(join(resolve(baselineDir), 'src', 'engine', 'internals.js')).href);
  consumers['w0 baseline engine'] = engineConsumer(baseline.createStateSync, baselineInternals.kInternals);
}
for (const name of Object.keys(consumers)) {
  if (only && !only.includes(name.split(' ')[0]) && !name.includes('baseline')) delete consumers[name];
}

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];

// CPU time of this process in microseconds (user + system). On a shared
// machine wall time also counts whatever else ran meanwhile; CPU time counts
// this process's threads only (V8's GC helpers included: garbage is a cost).
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

// A young-generation collection before each measurement, so that no consumer
// pays for another's fresh garbage. Not a full one: a full collection frees the
// maps of the previous run's objects and so deoptimizes every function
// compiled against them (--trace-deopt: "weak objects"), and each run would
// then measure the JIT warming up again (3-4x for (e) at 5 KB).
function collectGarbage() {
  globalThis.gc?.({ type: 'minor' });
}

// Times the snapshot's chunks and the deltas' chunks separately: "per delta"
// is the steady-state cost, without one big snapshot parse spread over the
// 2,000 deltas (which alone makes the floor 2x slower at 500 KB).
async function measure(c, snapshotParts, deltaParts) {
  collectGarbage();
  const ctx = await c.setup();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const feedAll = (parts) => {
    for (let i = 0; i < parts.length; i++) {
      c.feed(ctx, parts[i]);
      if ((i & 63) === 0) peak = Math.max(peak, process.memoryUsage().rss);
    }
  };
  const t0 = cpuUs();
  feedAll(snapshotParts);
  if (c.settle) await c.settle(ctx);
  const t1 = cpuUs();
  feedAll(deltaParts);
  if (c.finish) await c.finish(ctx);
  const t2 = cpuUs();
  peak = Math.max(peak, process.memoryUsage().rss);
  const deltas = deltaParts.events;
  return {
    usEvent: (t2 - t0) / (deltas + 1),
    usDelta: (t2 - t1) / deltas,
    peakMB: (peak - rss0) / 1048576,
    state: c.result(ctx),
  };
}

// The workload's events (one `data: <json>` frame each), parsed.
function events(bytes) {
  const text = new TextDecoder().decode(bytes);
  return text.split('\n\n').filter((f) => f.length > 0).map((f) => JSON.parse(f.slice('data: '.length)));
}

// The same state changes in each stream shape (see the file comment).
const SHAPES = {
  metadata: (ev, seq) => {
    const stamp = ev.type === 'STATE_SNAPSHOT' ? { seq } : { seq, baseSeq: seq - 1 };
    return { ...ev, metadata: { [WIRE_KEY]: stamp } };
  },
  seed: (ev, seq) => ev.type === 'STATE_SNAPSHOT'
    ? { type: ev.type, snapshot: ev.snapshot }
    : { type: ev.type, delta: ev.delta, seq, base_seq: seq - 1 },
};

// One shape's stream: the snapshot frame and the delta frames, each chunked by
// the same seeded chunker, so the two phases can be timed apart.
function stream(parsed, shape) {
  const encoder = new TextEncoder();
  const frame = (ev, seq) => encoder.encode(`data: ${JSON.stringify(SHAPES[shape](ev, seq))}\n\n`);
  const deltas = parsed.slice(1).map((ev, i) => frame(ev, i + 1));
  const deltaBytes = new Uint8Array(deltas.reduce((n, f) => n + f.length, 0));
  deltas.reduce((at, f) => (deltaBytes.set(f, at), at + f.length), 0);
  const deltaParts = chunks(deltaBytes, 8);
  deltaParts.events = deltas.length;
  return { snapshotParts: chunks(frame(parsed[0], 0), 7), deltaParts };
}

// Every consumer over one stream, interleaved, `runs` times after a warm-up
// round (round -1 warms the JIT on these bytes: without it the first size
// measured pays every consumer's compilation). Returns the medians per consumer.
async function measureStream({ snapshotParts, deltaParts }, label) {
  const names = Object.keys(consumers);
  const times = Object.fromEntries(names.map((k) => [k, { event: [], delta: [], peak: 0 }]));
  const finals = {};
  for (let r = -1; r < runs; r++) {
    for (const name of names) {
      const m = await measure(consumers[name], snapshotParts, deltaParts);
      if (r < 0) continue;
      times[name].event.push(m.usEvent);
      times[name].delta.push(m.usDelta);
      times[name].peak = Math.max(times[name].peak, m.peakMB);
      finals[name] = m.state;
    }
  }
  // Every state-applying consumer must end in the same state, or the timing means nothing.
  const appliers = names.filter((k) => !k.startsWith('c '));
  const ref = JSON.stringify(finals[appliers[0]]);
  for (const k of appliers) if (JSON.stringify(finals[k]) !== ref) throw new Error(`${k} disagrees with ${appliers[0]} on ${label}`);
  return Object.fromEntries(names.map((k) => [k, { event: median(times[k].event), delta: median(times[k].delta), peak: times[k].peak }]));
}

console.log(`bench_consumers: 2000 STATE_DELTA events after one snapshot, seeded 1-4096 B chunks, CPU time, median of ${runs} interleaved runs`);
const wasmDir = join(root, 'js', 'wasm');
const wasmGz = gzipSync(readFileSync(join(wasmDir, 'agui_sync.wasm'))).length;
const glueGz = gzipSync(readFileSync(join(wasmDir, 'agui_sync.mjs'))).length;
console.log(`package engine size: agui_sync.wasm ${wasmGz} B + glue ${glueGz} B gzipped = ${((wasmGz + glueGz) / 1024).toFixed(1)} KiB`);
const rows = [];
const ratios = [];
const results = {};
for (const size of sizes) {
  const parsed = events(workload(size));
  for (const shape of Object.keys(SHAPES)) {
    const label = `${size / 1000}KB ${shape}`;
    const m = await measureStream(stream(parsed, shape), label);
    results[label] = m;
    for (const [name, t] of Object.entries(m)) {
      rows.push({ state: label, consumer: name, 'us/event': t.event.toFixed(2), 'us/delta': t.delta.toFixed(2),
        'events/s': Math.round(1e6 / t.event), 'peak RSS +MB': t.peak.toFixed(1) });
    }
    const ratio = (a, b, k) => (m[a] && m[b] ? (m[a][k] / m[b][k]).toFixed(2) + 'x' : '-');
    ratios.push({ state: label, 'd/e per event': ratio('d agui-state-sync', 'e floor + immutable apply', 'event'),
      'd/e per delta': ratio('d agui-state-sync', 'e floor + immutable apply', 'delta'),
      'd/c per delta': ratio('d agui-state-sync', 'c floor', 'delta'),
      'w/e per event': ratio('w engine alone', 'e floor + immutable apply', 'event'),
      '(d-w)/e per event': m['w engine alone'] && m['d agui-state-sync'] && m['e floor + immutable apply']
        ? ((m['d agui-state-sync'].event - m['w engine alone'].event) / m['e floor + immutable apply'].event).toFixed(2) + 'x' : '-',
      ...(baselineDir ? { 'd0/e per event': ratio('d0 baseline', 'e floor + immutable apply', 'event'),
        'd/d0 per event': ratio('d agui-state-sync', 'd0 baseline', 'event'),
        'w/w0 per event': ratio('w engine alone', 'w0 baseline engine', 'event') } : {}) });
  }
}
console.table(rows);
console.log('agui-state-sync (d) against the contract limit (e), goal <= 1.3x:');
console.table(ratios);
for (const shape of Object.keys(SHAPES)) {
  const d = (size, k) => results[`${size / 1000}KB ${shape}`][k]?.delta;
  if (sizes.length < 3 || d(5000, 'd agui-state-sync') === undefined || d(5000, 'e floor + immutable apply') === undefined) continue;
  console.log(`${shape}: per delta, 500 KB / 5 KB: (d) ${(d(500000, 'd agui-state-sync') / d(5000, 'd agui-state-sync')).toFixed(2)}x, ` +
    `(e) ${(d(500000, 'e floor + immutable apply') / d(5000, 'e floor + immutable apply')).toFixed(2)}x; (d) - (e) per delta: ` +
    [5000, 50000, 500000].map((n) => (d(n, 'd agui-state-sync') - d(n, 'e floor + immutable apply')).toFixed(2)).join(' / ') + ' us at 5 / 50 / 500 KB');
}

// One 4 MB snapshot: ours vs the floor.
if (consumers['c floor'] && consumers['d agui-state-sync']) {
  const big = { doc: Array.from({ length: 20000 }, (_, i) => ({ id: i, text: 'section text '.repeat(12), done: i % 3 === 0 })) };
  const frame = new TextEncoder().encode(`data: ${JSON.stringify({ type: 'STATE_SNAPSHOT', snapshot: big, metadata: { seq: 1 } })}\n\n`);
  const parts = chunks(frame, 3);
  const t = { floor: [], ours: [] };
  for (let r = 0; r < runs; r++) {
    t.floor.push((await measure(consumers['c floor'], parts, Object.assign([], { events: 0 }))).usEvent);
    const sync = await createStateSync({ maxEventBytes: 16 << 20 });
    const t0 = cpuUs();
    for (const p of parts) sync.feed(p);
    t.ours.push(cpuUs() - t0);
    if (sync.state.doc.length !== 20000) throw new Error('snapshot not applied');
    sync.dispose();
  }
  const f = median(t.floor), o = median(t.ours);
  console.log(`4 MB snapshot (${(frame.length / 1048576).toFixed(1)} MiB): floor ${(f / 1000).toFixed(1)} ms, agui-state-sync ${(o / 1000).toFixed(1)} ms = ${(o / f).toFixed(2)}x (target <= 3x)`);
}
