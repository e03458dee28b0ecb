// A fleet under load (issue 26, item 5). Not a test: it prints, and exits 1
// when a client did not end in sync.
//
//   node bench/js/bench_fleet.mjs [clients=1000] [runs=100] [seconds=30] [intervalMs=500] [appendfsync=always]
//
// Real processes on this machine: a redis-server (started here on a free
// port, appendonly; `appendfsync` always, as the tests run it, or everysec), two agui-state-sync-proxy CLI instances (A and B, --redis on it,
// --ops-port), and an upstream (bench_fleet_upstream.mjs, forked) whose runs
// stream until the bench ends them: every `intervalMs`, each run sends a
// STATE_DELTA and a TEXT_MESSAGE_CONTENT, both stamped with the send time.
// A few more runs (runs / 10) are read straight from the upstream by one
// client each: the floor of delivery latency on this machine as loaded now.
// Run r is started on instance r % 2 (its holder) by a starter client (a
// POST); then clients / runs clients attach to each run (GET with
// X-AGUI-Attach), alternately on A and B, so half of them are on the instance
// that does not hold their run (it tails the run's Stream in Redis). All
// clients are engines in this process (bench_fleet_clients.mjs). Once every
// client is synced, the bench measures for `seconds`:
//  - delivery latency, upstream write to client receive, p50 / p99, for the
//    clients on the holder and on the other instance (and the starters);
//  - CPU per upstream event of each process: utime + stime from
//    /proc/<pid>/stat over the window / the upstream's events in the window;
//  - Redis memory: MEMORY USAGE and XLEN of each run's log Stream, and
//    INFO used_memory over the fleet's keys / runs.
// Then the upstream ends every run; each client must end with the upstream's
// final state and chat text, status 'synced' and RUN_FINISHED, and each
// instance's metrics must count its runs and attaches.
import { fork, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { endProblems, fleetClient, openStream } from './bench_fleet_clients.mjs';
import { upstreamChild } from './bench_fleet_upstream.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const PREFIX = 'fleet:';
const ATTACH_BATCH = 100;
const END_DEADLINE_MS = 120000;
const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100; // of /proc/<pid>/stat

const pick = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN);
const round = (x, digits) => Math.round(x * 10 ** digits) / 10 ** digits;

if (process.argv[2] === '--upstream-child') await upstreamChild(Number(process.argv[3]));
else process.exitCode = await main();

async function main() {
  const [clients = 1000, runs = 100, seconds = 30, intervalMs = 500] = process.argv.slice(2, 6).map(Number);
  const appendfsync = process.argv[6] ?? 'always';
  const loadBefore = loadavg();
  const { RedisServer } = await import(join(root, 'tests', 'js', 'redis-support.mjs'));
  const { metric, scrapeCli, startProxyCli, until } = await import(join(root, 'tests', 'js', 'proxy-support.mjs'));
  const { createStateSync } = await import(join(root, 'js', 'src', 'index.js'));
  const { createClient } = await import('redis');
  process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';
  const redis = await RedisServer.start();
  const upstream = await startUpstream(intervalMs);
  const args = ['--upstream', upstream.url, '--port', '0', '--redis', redis.url, '--redis-prefix', PREFIX, '--ops-port', '0'];
  const instances = await Promise.all([startProxyCli(args), startProxyCli(args)]);
  await Promise.all(instances.map((cli) => ready(cli, until)));
  const store = createClient({ url: redis.url });
  await store.connect();
  await store.sendCommand(['CONFIG', 'SET', 'appendfsync', appendfsync]);
  try {
    const baseline = await usedMemory(store);
    const fleet = await buildFleet({ createStateSync, instances, upstream, clients, runs });
    const measured = await measure({ fleet, instances, upstream, store, seconds });
    const scraped = await Promise.all(instances.map(scrapeCli));
    const finals = (await upstream.call({ cmd: 'finish' })).finals;
    const problems = await endCheck(fleet, finals);
    problems.push(...metricProblems(scraped, fleet, metric));
    report({ clients, runs, seconds, intervalMs, appendfsync, fleet, measured: { ...measured, baseline }, loadBefore, problems });
    return problems.length === 0 ? 0 : 1;
  } finally {
    await store.close();
    await Promise.all(instances.map((cli) => cli.stop()));
    upstream.child.kill();
    await redis.close();
  }
}

// The upstream's process and a request/response call over IPC.
async function startUpstream(intervalMs) {
  const child = fork(fileURLToPath(import.meta.url), ['--upstream-child', String(intervalMs)]);
  let waiting = null;
  child.on('message', (message) => waiting?.(message));
  const next = () => new Promise((resolve) => { waiting = resolve; });
  const { port } = await next();
  const call = (message) => {
    const answer = next();
    child.send(message);
    return answer;
  };
  return { child, call, url: `http://127.0.0.1:${port}/agent` };
}

// Until the instance's /readyz says its store answers (the CLI connects to Redis on its own time).
async function ready(cli, until) {
  const ops = await until(() => /operations on (http:\/\/\S+)/.exec(cli.output())?.[1], 'the operations port');
  await until(async () => (await fetch(new URL('/readyz', ops))).status === 200, 'the instance to be ready');
}

// The starters (run r on instance r % 2), then the attached clients, alternately on A and B.
async function buildFleet({ createStateSync, instances, upstream, clients, runs }) {
  const samples = { starter: [], holder: [], other: [], direct: [] };
  const direct = [];
  for (let r = 0; r < Math.max(1, Math.floor(runs / 10)); r++) {
    direct.push(await fleetClient(createStateSync, { url: upstream.url, threadId: `direct-${r}`, runId: `direct-run-${r}`, kind: 'direct', samples: samples.direct }));
  }
  await Promise.all(direct.map(openStream));
  const starters = [];
  for (let r = 0; r < runs; r++) {
    starters.push(await fleetClient(createStateSync, { url: instances[r % 2].url, threadId: `t${r}`, runId: `run-${r}`, kind: 'starter', samples: samples.starter }));
  }
  await Promise.all(starters.map(openStream));
  const attached = [];
  for (let i = 0; i < clients; i++) {
    const r = i % runs;
    const on = (r + Math.floor(i / runs)) % 2;
    const client = await fleetClient(createStateSync, { url: instances[on].url, threadId: `t${r}`, kind: 'attach', samples: on === r % 2 ? samples.holder : samples.other });
    client.instance = on;
    attached.push(client);
  }
  for (let i = 0; i < attached.length; i += ATTACH_BATCH) await Promise.all(attached.slice(i, i + ATTACH_BATCH).map(openStream));
  return { samples, starters, attached, direct, all: [...direct, ...starters, ...attached] };
}

// The window: every client samples latency; CPU and upstream events before and after; Redis memory at its end.
async function measure({ fleet, instances, upstream, store, seconds }) {
  const redisPid = Number(/process_id:(\d+)/.exec(await store.sendCommand(['INFO', 'server']))[1]);
  const pids = { A: instances[0].child.pid, B: instances[1].child.pid, redis: redisPid, 'bench (clients)': process.pid };
  for (const client of fleet.all) client.measuring = true;
  const before = { cpu: cpuOf(pids), events: (await upstream.call({ cmd: 'count' })).events, at: process.hrtime.bigint() };
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const after = { cpu: cpuOf(pids), events: (await upstream.call({ cmd: 'count' })).events, at: process.hrtime.bigint() };
  for (const client of fleet.all) client.measuring = false;
  const events = after.events - before.events;
  const wallS = Number(after.at - before.at) / 1e9;
  const cpu = Object.keys(pids).map((name) => {
    const s = after.cpu[name] - before.cpu[name];
    return { process: name, 'CPU s': round(s, 2), 'CPU/upstream event (µs)': round((s * 1e6) / events, 1), 'share of a core': `${round((100 * s) / wallS, 1)}%` };
  });
  return { events, wallS, cpu, memory: await redisMemory(store) };
}

// CPU seconds (user + system) of each process so far, from /proc/<pid>/stat.
function cpuOf(pids) {
  const out = {};
  for (const [name, pid] of Object.entries(pids)) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
    out[name] = (Number(fields[11]) + Number(fields[12])) / TICKS; // utime, stime: fields 14 and 15
  }
  return out;
}

// Every run log Stream of the fleet: its MEMORY USAGE and XLEN; and Redis's used_memory.
async function redisMemory(store) {
  const keys = [];
  let cursor = '0';
  do {
    const [next, found] = await store.sendCommand(['SCAN', cursor, 'MATCH', `${PREFIX}{run:*}:log`, 'COUNT', '1000']);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  let bytes = 0;
  let entries = 0;
  for (const key of keys) {
    bytes += Number(await store.sendCommand(['MEMORY', 'USAGE', key, 'SAMPLES', '0']));
    entries += Number(await store.sendCommand(['XLEN', key]));
  }
  const used = await usedMemory(store);
  const dbKeys = Number(await store.sendCommand(['DBSIZE']));
  return { logs: keys.length, bytes, entries, used, dbKeys };
}

async function usedMemory(store) {
  return Number(/used_memory:(\d+)/.exec(await store.sendCommand(['INFO', 'memory']))[1]);
}

// Every stream ends (the upstream finished its runs); what is wrong with each client.
async function endCheck(fleet, finals) {
  let timer;
  const deadline = new Promise((resolve) => { timer = setTimeout(resolve, END_DEADLINE_MS, 'deadline'); });
  const ended = await Promise.race([Promise.all(fleet.all.map((c) => c.done)), deadline]);
  clearTimeout(timer);
  const problems = ended === 'deadline' ? [`streams still open after ${END_DEADLINE_MS} ms`] : [];
  fleet.all.forEach((client, i) => {
    for (const problem of endProblems(client, finals[client.threadId])) problems.push(`client ${i} (${client.kind} ${client.threadId}): ${problem}`);
  });
  for (const client of fleet.all) { client.req.destroy(); client.sync.dispose(); }
  return problems;
}

// Each instance started its runs and counted its attaches (scraped while the runs were live).
function metricProblems(scraped, fleet, metric) {
  const problems = [];
  scraped.forEach((text, on) => {
    const name = 'AB'[on];
    const started = fleet.starters.filter((_, r) => r % 2 === on).length;
    const attaches = fleet.attached.filter((c) => c.instance === on).length;
    const check = (sample, want) => {
      const got = metric(text, sample);
      if (got !== want) problems.push(`instance ${name}: ${sample} = ${got}, expected ${want}`);
    };
    check('agui_proxy_runs_started_total', started);
    check('agui_proxy_live_runs', started);
    check('agui_proxy_attaches_total{found="run"}', attaches);
  });
  return problems;
}

function report({ clients, runs, seconds, intervalMs, appendfsync, fleet, measured, loadBefore, problems }) {
  const { events, wallS, cpu, memory, baseline } = measured;
  console.log(`\nfleet: ${clients} attached clients + ${runs} starters on ${runs} runs, two proxy instances on one redis-server (appendfsync ${appendfsync});`);
  console.log(`each run sends a STATE_DELTA and a TEXT_MESSAGE_CONTENT every ${intervalMs} ms; measured ${round(wallS, 1)} s, ${events} upstream events (${round(events / wallS, 0)}/s)`);
  console.log(`load average before: ${loadBefore.map((x) => x.toFixed(2)).join(' ')}, after: ${loadavg().map((x) => x.toFixed(2)).join(' ')} (1/5/15 min)`);
  const latency = (name, list) => {
    const sorted = Float64Array.from(list).sort();
    return { clients: name, samples: sorted.length, 'p50 (ms)': round(pick(sorted, 0.5) / 1000, 1), 'p99 (ms)': round(pick(sorted, 0.99) / 1000, 1), 'max (ms)': round(pick(sorted, 1) / 1000, 1) };
  };
  console.table([
    latency('attached, on the holder', fleet.samples.holder),
    latency('attached, on the other instance', fleet.samples.other),
    latency('starters (on the holder)', fleet.samples.starter),
    latency(`direct: ${fleet.direct.length} runs read from the upstream, no proxy (the floor)`, fleet.samples.direct),
  ]);
  console.table(cpu);
  console.log(`redis: ${memory.logs} run logs, ${round(memory.bytes / memory.logs / 1024, 1)} KB each (MEMORY USAGE), ${round(memory.entries / memory.logs, 0)} entries each, ${round(memory.bytes / memory.entries, 0)} B per entry; used_memory ${round(memory.used / 1048576, 1)} MB for ${memory.dbKeys} keys, ${round((memory.used - baseline) / runs / 1024, 1)} KB per run over the empty server's (everything included)`);
  if (problems.length === 0) console.log(`every client (${fleet.all.length}) ended synced on the upstream's final state and text, with RUN_FINISHED; each instance's metrics count its runs and attaches`);
  else console.log(`${problems.length} problems:\n  ${problems.slice(0, 20).join('\n  ')}`);
}

