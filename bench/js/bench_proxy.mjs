// The sequencing proxy in front of a snapshot-only AG-UI agent. Not a test: it prints.
//
//   node --expose-gc bench/js/bench_proxy.mjs [updates=500] [stateKB=50] [threads=50]
//   (PROXY_CPU_PROF=<dir>: the proxy's process also writes a CPU profile there;
//    PROXY_STORE=memory: its threads are store-bound, on a memoryStore())
//
// The agent (tests/support/upstreams.mjs, shape 'snapshots', the real
// @ag-ui/encoder) sends a STATE_SNAPSHOT of a ~50 KB state after each of
// `updates` changes. The proxy runs in its own process (this file, forked with
// --proxy-child), so its CPU time is its own; a createStateSync +
// connectStateSync client reads through it. Reported:
//  - bytes the client received vs bytes the agent sent (goal: <= 10%);
//  - the proxy process's CPU time per upstream event (process.cpuUsage() of
//    its process around one run; a warm-up run, then the median of ROUNDS),
//    against one JSON.parse of such an event in the same process (issue 27,
//    item 3: goal <= 2x);
//  - memory per thread: `threads` more threads, each after one short run of
//    the same state, measured once their runs' event logs were dropped (what a
//    thread costs while idle: its emitter's state and replay buffer, and the
//    vouched state), and the event-log bytes a finished run keeps meanwhile.
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const GRACE_MS = 300;
const ROUNDS = 3;

if (process.argv[2] === '--proxy-child') await proxyChild(process.argv[3]);
else await main();

// --- the proxy's process --------------------------------------------------------

async function proxyChild(upstreamUrl) {
  if (process.env.PROXY_CPU_PROF) process.on('SIGTERM', () => process.exit(0)); // so --cpu-prof writes its file
  const { createStateSyncProxy } = await import(join(root, 'js', 'src', 'proxy.js'));
  const { createStateEmitter, createStateSync } = await import(join(root, 'js', 'src', 'index.js'));
  const { kInternals } = await import(join(root, 'js', 'src', 'engine', 'internals.js'));
  let upstream = upstreamUrl;
  // PROXY_STORE=memory: the threads are store-bound (memoryStore(): writes are promises, as with Redis).
  const { memoryStore } = await import(join(root, 'js', 'src', 'server.js'));
  const options = () => ({ upstream, graceMs: GRACE_MS, ...(process.env.PROXY_STORE === 'memory' ? { store: memoryStore() } : {}) });
  let proxy = createStateSyncProxy(options());
  const server = createServer((req, res) => proxy(req, res));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  // Handles on the two WebAssembly modules the proxy's engines share, for their heap in use.
  const emitterEngine = (await createStateEmitter())[kInternals]().engine;
  const syncEngine = (await createStateSync())[kInternals]().engine;
  process.on('message', (message) => {
    if (message.cmd === 'parse') {
      // One parse of an upstream event's data, as the proxy's process does it: CPU µs per parse.
      // The median of 5 passes: one pass alone moved by ±30% from run to run.
      for (let i = 0; i < 20; i++) JSON.parse(message.text); // warm
      const passes = Array.from({ length: 5 }, () => {
        const cpu = process.cpuUsage();
        for (let i = 0; i < message.times; i++) JSON.parse(message.text);
        const used = process.cpuUsage(cpu);
        return (used.user + used.system) / message.times;
      });
      process.send({ us: passes.sort((a, b) => a - b)[2] });
      return;
    }
    if (message.cmd === 'parts') {
      parts(message.kb, message.times, createStateSync, createStateEmitter).then((figures) => process.send(figures));
      return;
    }
    if (message.cmd === 'upstream') {
      proxy.close();
      upstream = message.url;
      proxy = createStateSyncProxy(options());
      process.send({ ok: true });
      return;
    }
    const cpu = process.cpuUsage(); // before the gc below, which is not the proxy's work
    globalThis.gc?.();
    const memory = process.memoryUsage();
    process.send({
      cpu,
      heapUsed: memory.heapUsed,
      rss: memory.rss,
      wasmInUse: emitterEngine.heapBytesInUse() + syncEngine.heapBytesInUse(),
      stats: proxy.stats(),
    });
  });
  process.send({ port: server.address().port });
}

// What one upstream snapshot costs each part of the proxy that must read it
// whole, in its process (CPU µs per event, median of 3 passes over `times`
// changed states): a JSON.parse of the event; the route the proxy took before
// issue 27, in two modules: a StateSync fed its SSE frame (framing, parsing,
// the atomic apply, the Result and the JS mirror) and an emitter's update() to
// its state (the diff against the thread's state, which turns the snapshot
// into a delta); and the proxy's route, in one module: a RelayEngine fed the
// frame and its verified state written by the run's cursor into a thread in
// memory by reference (the receiver, the diff, the delta's events). The rest
// of a run's cost per event is the relay, the HTTP I/O and the client's stream.
async function parts(kb, times, createStateSync, createStateEmitter) {
  // (A build from before the one-module route has no relay-engine.js: compared with --baseline runs, it gets no such column.)
  const { RelayEngine } = await import(join(root, 'js', 'src', 'proxy', 'relay-engine.js')).catch(() => ({}));
  const { UpstreamCursor } = await import(join(root, 'js', 'src', 'server', 'upstream-cursor.js'));
  const states = Array.from({ length: times }, (_, i) => {
    const state = bigState(kb);
    state.counter = i + 1;
    state.items[i % state.items.length].label = `changed ${i}`;
    return state;
  });
  const texts = states.map((snapshot) => JSON.stringify({ type: 'STATE_SNAPSHOT', snapshot }));
  const frames = texts.map((text) => new TextEncoder().encode(`data: ${text}\n\n`));
  const sync = await createStateSync();
  const emitter = await createStateEmitter({ initialState: bigState(kb) });
  const relay = RelayEngine ? await RelayEngine.create({ initialState: bigState(kb) }) : null;
  const relayEmitter = await createStateEmitter({ initialState: bigState(kb) });
  const cursor = await UpstreamCursor.create();
  cursor.begin(bigState(kb), false, relayEmitter.seq);
  const relayed = (frame) => {
    for (const o of relay?.feed(frame) ?? []) if (o.received) cursor.writeReceived(relayEmitter, o.received, o.ref, 0);
  };
  const cpuPer = (fn) => {
    const cpu = process.cpuUsage();
    for (let i = 0; i < times; i++) fn(i);
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / times;
  };
  const rows = { parse: [], receiver: [], emitter: [], relay: [] };
  for (let pass = 0; pass < 4; pass++) { // pass 0 warms up
    const parse = cpuPer((i) => JSON.parse(texts[i]));
    const receiver = cpuPer((i) => sync.feed(frames[i]));
    const update = cpuPer((i) => emitter.update(states[(i + pass) % times]));
    const relayUs = cpuPer((i) => relayed(frames[(i + pass) % times]));
    if (pass > 0) rows.parse.push(parse), rows.receiver.push(receiver), rows.emitter.push(update), rows.relay.push(relayUs);
  }
  for (const x of [sync, emitter, relay, relayEmitter, cursor]) x?.dispose();
  const median = (v) => v.sort((a, b) => a - b)[1];
  return { parse: median(rows.parse), receiver: median(rows.receiver), emitter: median(rows.emitter), relay: relay ? median(rows.relay) : null };
}

// --- the agent, the client, the figures -------------------------------------------

// PROXY_CPU_PROF=<dir>: the proxy's process writes a V8 CPU profile there (node --cpu-prof).
function profileArgs() {
  const dir = process.env.PROXY_CPU_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

function bigState(kb) {
  const items = Math.round((kb * 1024) / 205);
  return { title: 'plan', counter: 0, items: Array.from({ length: items }, (_, i) => ({ id: `seed${i}`, label: `item ${i} `.padEnd(180, 'x') })) };
}

function ask(child, message) {
  return new Promise((resolve) => {
    child.once('message', resolve);
    child.send(message);
  });
}

async function clientRun(url, threadId, runId) {
  const { connectStateSync, createStateSync } = await import(join(root, 'js', 'src', 'index.js'));
  const sync = await createStateSync();
  let bytes = 0;
  const types = { STATE_SNAPSHOT: 0, STATE_DELTA: 0 };
  const { done } = connectStateSync(sync, {
    url,
    body: () => ({ threadId, runId, state: {}, messages: [], tools: [], context: [], forwardedProps: {} }),
    onChunk: (chunk) => {
      bytes += chunk.length;
    },
    onOutcome: (o) => {
      if (o.kind === 'applied') types[o.type]++;
    },
  });
  await done;
  const result = { bytes, types, status: sync.status, state: sync.state };
  sync.dispose();
  return result;
}

async function main() {
  const [updates = 500, stateKB = 50, threads = 50] = process.argv.slice(2).map(Number);
  const { buildScript, startUpstream } = await import(join(root, 'tests', 'support', 'upstreams.mjs'));
  const initialState = bigState(stateKB);
  const script = buildScript({ seed: 1, steps: updates, textEvery: 0, toolCall: false });
  const upstream = await startUpstream({ shape: 'snapshots', script, stepMs: 0, initialState });
  const child = fork(fileURLToPath(import.meta.url), ['--proxy-child', upstream.url], { execArgv: ['--expose-gc', ...profileArgs()] });
  const { port } = await new Promise((resolve) => child.once('message', resolve));
  const url = `http://127.0.0.1:${port}/agent`;
  const rounds = await measureRounds(child, upstream, url);
  const eventText = JSON.stringify({ type: 'STATE_SNAPSHOT', snapshot: initialState });
  const parse = await ask(child, { cmd: 'parse', text: eventText, times: 200 });
  const memory = await perThread(child, threads, initialState, startUpstream, buildScript, url);
  const partsUs = await ask(child, { cmd: 'parts', kb: stateKB, times: 50 }); // after perThread: its garbage is not theirs
  child.kill();
  await upstream.close();
  const measured = rounds.slice(1).sort((a, b) => a.cpuUs - b.cpuUs);
  const median = measured[Math.floor(measured.length / 2)];
  console.log(`bench_proxy: snapshot-only agent, ${Math.round(JSON.stringify(initialState).length / 1024)} KB state, ${updates} updates (${median.events} upstream events), proxy in its own process, median of ${ROUNDS} runs`);
  printFigures(median, memory, threads, parse.us);
  printParts(partsUs);
  if (rounds.some((r) => !r.matches || r.run.status !== 'synced')) process.exitCode = 1;
}

// A warm-up round, then ROUNDS measured ones, each a full run on a new thread.
async function measureRounds(child, upstream, url) {
  const rounds = [];
  for (let i = 0; i <= ROUNDS; i++) {
    await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 2)); // the previous run's log is dropped
    const before = await ask(child, { cmd: 'sample' });
    const t0 = performance.now();
    const run = await clientRun(url, `bench-${i}`, `run-${i}`);
    const elapsed = performance.now() - t0;
    const after = await ask(child, { cmd: 'sample' });
    rounds.push({
      run,
      elapsed,
      matches: isDeepStrictEqual(JSON.parse(JSON.stringify(run.state)), upstream.state(`bench-${i}`)),
      events: upstream.requests[i].events.length,
      cpuUs: after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system,
      upBytes: after.stats.upstreamBytes - before.stats.upstreamBytes,
      logBytes: after.stats.bufferedBytes - before.stats.bufferedBytes,
    });
  }
  return rounds;
}

function printFigures({ run, elapsed, matches, events, cpuUs, upBytes, logBytes }, memory, threads, parseUs) {
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  console.table([{
    'upstream sent': kb(upBytes),
    'client received': kb(run.bytes),
    'client / upstream': `${((run.bytes / upBytes) * 100).toFixed(2)} %`,
    'client events': `${run.types.STATE_SNAPSHOT} snapshot + ${run.types.STATE_DELTA} deltas`,
    'client status': `${run.status}${matches ? ', = upstream' : ', DIFFERS'}`,
  }]);
  console.table([{
    'proxy CPU total': `${(cpuUs / 1000).toFixed(0)} ms`,
    'per upstream event': `${(cpuUs / events).toFixed(0)} µs`,
    'one JSON.parse of a snapshot event': `${parseUs.toFixed(0)} µs`,
    'per event / one parse (goal <= 2x)': `${(cpuUs / events / parseUs).toFixed(2)}x`,
    'per KB from upstream': `${(cpuUs / (upBytes / 1024)).toFixed(1)} µs`,
    'run wall time': `${elapsed.toFixed(0)} ms`,
  }]);
  console.table([{
    'threads measured': threads,
    'JS heap per thread': kb(memory.heap / threads),
    'WASM heap in use per thread': kb(memory.wasm / threads),
    'RSS per thread': kb(memory.rss / threads),
    'event log kept per finished run (graceMs)': kb(logBytes),
  }]);
}

function printParts({ parse, receiver, emitter, relay }) {
  const x = (us) => `${us.toFixed(0)} µs (${(us / parse).toFixed(2)}x)`;
  console.table([{
    'one snapshot event, CPU per event: JSON.parse': `${parse.toFixed(0)} µs`,
    'StateSync.feed': x(receiver),
    'emitter.update': x(emitter),
    'two modules (the route before)': x(receiver + emitter),
    'one module: RelayEngine + writeReceived': relay === null ? 'n/a' : x(relay),
  }]);
}

// `threads` threads, one short run each (same state, 3 updates), measured after their runs were dropped.
async function perThread(child, threads, initialState, startUpstream, buildScript, url) {
  const small = await startUpstream({ shape: 'snapshots', script: buildScript({ seed: 2, steps: 3, textEvery: 0, toolCall: false }), stepMs: 0, initialState });
  await ask(child, { cmd: 'upstream', url: small.url });
  await clientRun(url, 'warm', 'warm'); // engines, pools and JIT warm before the baseline
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 2));
  const base = await ask(child, { cmd: 'sample' });
  for (let i = 0; i < threads; i++) await clientRun(url, `thread-${i}`, 'r');
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 2));
  const end = await ask(child, { cmd: 'sample' });
  await small.close();
  if (end.stats.threads !== threads + 1 || end.stats.bufferedBytes !== 0) throw new Error(`unexpected proxy state ${JSON.stringify(end.stats)}`);
  return { heap: end.heapUsed - base.heapUsed, wasm: end.wasmInUse - base.wasmInUse, rss: end.rss - base.rss };
}
