// renderStateForPrompt through the WebAssembly engine next to what integrations
// do today, JSON.stringify(state, null, 2), in the same process, interleaved.
// Not a test: it prints a table. The states are the native benchmark's
// (bench/bench_render.cpp: the shared workload, bench/workload.h), read from
// build/native/workload_dump, so both sides render identical states.
//
//   node bench/js/bench_render.mjs [runs=15]
//
// Columns (microseconds per call, median of `runs` interleaved rounds; each
// round repeats a call until ~20 ms have passed):
//   stringify   JSON.stringify(state, null, 2)
//   compact     JSON.stringify(state): the JS part of every render below (the
//               state crosses into WebAssembly as JSON text), for scale
//   default     renderStateForPrompt(state, { untrusted: ['/proposal'] }) (32 KB cap:
//               the 50 KB and 500 KB states take budget passes)
//   full        nothing cut (caps far above the state): every byte escaped,
//               canonical key order, ECMAScript numbers
//   marked      full, the whole state untrusted with a datamark
//   em-default, em-full  default and full rendered by a StateEmitter holding the
//               state (emitter.renderStateForPrompt): where the state already is,
//               so no JSON text of it crosses (issue 27, item 4)
// A render is the whole call: JSON.stringify(state) in JS, the UTF-8 copy
// into WebAssembly memory, the parse, the render, and the text back.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createStateEmitter, initServerEngine, renderStateForPrompt } from '../../js/src/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const dump = join(here, '..', '..', 'build', 'native', 'workload_dump');
const runs = Number(process.argv[2] ?? 15);

const FULL = { untrusted: ['/proposal'], maxBytes: 256 << 20, maxStringBytes: 1 << 30, maxArrayItems: 1 << 30 };
const CASES = {
  stringify: (state) => JSON.stringify(state, null, 2),
  compact: (state) => JSON.stringify(state),
  default: (state) => renderStateForPrompt(state, { untrusted: ['/proposal'] }).text,
  full: (state) => renderStateForPrompt(state, FULL).text,
  marked: (state) => renderStateForPrompt(state, { ...FULL, untrusted: [''], datamark: '^' }).text,
  emDefault: (state, emitter) => emitter.renderStateForPrompt({ untrusted: ['/proposal'] }).text,
  emFull: (state, emitter) => emitter.renderStateForPrompt(FULL).text,
};

/** The state of the native benchmark: the snapshot of workload_dump <bytes> 0 42. */
function workloadState(bytes) {
  const sse = execFileSync(dump, [String(bytes), '0', '42'], { maxBuffer: 1 << 28 }).toString();
  const data = sse.slice(sse.indexOf('data: ') + 6, sse.indexOf('\n'));
  return JSON.parse(data).snapshot;
}

// Microseconds per call of one round: the batch is calibrated once per case.
function round(fn, batch) {
  const t0 = performance.now();
  for (let i = 0; i < batch; i++) fn();
  return ((performance.now() - t0) * 1000) / batch;
}

function calibrate(fn) {
  let batch = 1;
  while (round(fn, batch) * batch < 20000 && batch < 1 << 20) batch *= 2;
  return batch;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

await initServerEngine();
console.log(`bench_render: renderStateForPrompt (WASM) vs JSON.stringify(state, null, 2), median of ${runs} interleaved rounds, us per call`);
console.log('state   bytes    | stringify | compact |  default  ratio |     full  ratio |   marked  ratio | em-default ratio |  em-full  ratio | out(default/full/stringify)');
for (const [name, bytes] of [['5KB', 5000], ['50KB', 50000], ['500KB', 500000]]) {
  const state = workloadState(bytes);
  const emitter = await createStateEmitter({ initialState: state });
  const calls = Object.fromEntries(Object.entries(CASES).map(([k, f]) => [k, () => f(state, emitter)]));
  const batches = Object.fromEntries(Object.entries(calls).map(([k, f]) => [k, calibrate(f)]));
  const samples = Object.fromEntries(Object.keys(calls).map((k) => [k, []]));
  for (let r = 0; r < runs; r++) for (const k of Object.keys(calls)) samples[k].push(round(calls[k], batches[k]));
  const t = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
  const ratio = (k) => `${(t[k] / t.stringify).toFixed(2)}x`.padStart(6);
  const out = ['default', 'full', 'stringify'].map((k) => Buffer.byteLength(calls[k]())).join('/');
  console.log(`${name.padEnd(6)} ${String(JSON.stringify(state).length).padStart(8)} | ${t.stringify.toFixed(1).padStart(9)} | ${t.compact.toFixed(1).padStart(7)} | ` +
    `${t.default.toFixed(1).padStart(8)} ${ratio('default')} | ${t.full.toFixed(1).padStart(8)} ${ratio('full')} | ` +
    `${t.marked.toFixed(1).padStart(8)} ${ratio('marked')} | ${t.emDefault.toFixed(1).padStart(9)} ${ratio('emDefault')} | ` +
    `${t.emFull.toFixed(1).padStart(8)} ${ratio('emFull')} | ${out}`);
  emitter.dispose();
}
console.log('ratio = render / JSON.stringify(state, null, 2); out = bytes of text (UTF-8)');
