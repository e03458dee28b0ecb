// Fault test with real processes (issue 17, section 3): two server instances
// (child processes, fleet-server.mjs) share one thread through a real
// redis-server, behind a small round-robin TCP balancer; clients
// (createStateSync + connectStateSync) reach it through the seeded TCP fault
// link (cuts, stalls, re-chunking). The agent's writes alternate between the
// instances; mid-run one instance is killed with SIGKILL and started again;
// clients approve proposals and re-send their resumes. Invariants: no client
// is ever synced on a state the thread did not have at that seq; every client
// converges; every catch-up the log covers is a replay (or nothing), never a
// snapshot; each approval is consumed once and paid once.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { startBalancer } from '../support/balancer.mjs';
import { startFaultLink } from '../support/fault-link.mjs';
import { until } from '../support/until.mjs';
import { freePort, RedisServer } from './redis-support.mjs';
import { here, pkg, plain } from './support.mjs';
import { server } from './store-support.mjs';

const { connectStateSync, createStateSync } = pkg;
const { SNAPSHOT_REASONS } = server;
const CLIENTS = 6;
const STEPS = 80;
const KEY = 'fleet-thread';
const TEXT = 'z'.repeat(20000); // deltas stay far below a snapshot: a replay is always the cheaper answer
const stateAt = (step) => ({ text: TEXT, step, proposal: { id: Math.floor(step / 20), amount: 10 * (Math.floor(step / 20) + 1) } });

let redis;
const instances = new Map(); // name -> { port, child, alive }
const logs = [];

before(async () => { redis = await RedisServer.start(); });
after(async () => {
  for (const instance of instances.values()) instance.child?.kill('SIGKILL');
  await redis.close();
});

async function startInstance(name, port) {
  const child = spawn(process.execPath, [join(here, 'fleet-server.mjs')], {
    env: { ...process.env, REDIS_URL: redis.url, PORT: String(port), KEY, NAME: name, INITIAL: JSON.stringify(stateAt(0)) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const instance = { name, port, child, alive: true };
  instances.set(name, instance);
  let pending = '';
  let listening;
  const ready = new Promise((resolve) => { listening = resolve; });
  child.stdout.on('data', (data) => {
    pending += data;
    for (let i; (i = pending.indexOf('\n')) >= 0; pending = pending.slice(i + 1)) {
      const record = JSON.parse(pending.slice(0, i));
      if (record.kind === 'listening') listening();
      else logs.push(record);
    }
  });
  child.once('exit', () => { instance.alive = false; });
  await ready;
  return instance;
}

async function post(port, path, body) {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return response.json();
}

// The agent's next state, written through one instance (the other when it is down).
async function write(order, step, history) {
  for (const name of order) {
    const instance = instances.get(name);
    if (!instance?.alive) continue;
    try {
      const { seq } = await post(instance.port, '/update', { state: stateAt(step) });
      if (seq !== null) history.set(seq, stateAt(step));
      return;
    } catch {
      // killed meanwhile: the other one
    }
  }
  throw new Error('no instance took the write');
}

// A client approves the proposal it is shown and sends the resume until an instance answers, then once more.
async function approve(client, balancerPort) {
  const view = client.sync.guard.view('/proposal');
  if (!view.ok) return null;
  const result = client.sync.guard.approve(view.token);
  if (!result.ok) return null;
  const body = { interruptId: `proposal-${view.value.id}`, approval: result.approval };
  const answers = [];
  while (answers.length < 2) {
    try {
      answers.push(await post(balancerPort, '/resume', body));
    } catch {
      await new Promise((r) => setTimeout(r, 20)); // cut: re-send
    }
  }
  return { interruptId: body.interruptId, amount: view.value.amount, answers };
}

test('two instances behind a balancer, one killed and restarted, clients through a faulty link', { timeout: 120000 }, async () => {
  const [portA, portB] = [await freePort(), await freePort()];
  await startInstance('A', portA);
  await startInstance('B', portB);
  const balancer = await startBalancer([portA, portB]);
  const link = await startFaultLink({
    target: { host: '127.0.0.1', port: balancer.address().port }, seed: 17,
    cutProbability: 0.9, cutAfterBytes: [1000, 30000], stallProbability: 0.01, stallMs: 60, chunkBytes: [1, 4096],
  });
  const history = new Map([[0, stateAt(0)]]);
  const clients = [];
  const observed = []; // every (client, seq, state) a client was synced on, checked against the thread's history at the end
  for (let i = 0; i < CLIENTS; i++) {
    const sync = await createStateSync();
    sync.subscribe(() => {
      if (sync.status === 'synced') observed.push({ client: i, seq: sync.lastSeq, state: JSON.stringify(sync.state) });
    });
    const connection = connectStateSync(sync, { url: link.url('/stream'), backoff: { initialMs: 10, maxMs: 200, jitter: 0.5 } });
    clients.push({ sync, connection });
  }
  const approvals = [];
  for (let step = 1; step <= STEPS; step++) {
    await write(step % 2 ? ['A', 'B'] : ['B', 'A'], step, history);
    if (step === 30) instances.get('A').child.kill('SIGKILL');
    if (step === 45) await startInstance('A', portA);
    if (step % 20 === 10) {
      const shown = (c) => c.sync.status === 'synced' && c.sync.state.proposal.id === Math.floor(step / 20);
      await until(() => clients.some(shown), `a client shown proposal ${Math.floor(step / 20)}`, 10000);
      approvals.push(approve(clients.find(shown), balancer.address().port));
    }
    await new Promise((r) => setTimeout(r, 40));
  }
  const finalSeq = Math.max(...history.keys());
  const where = () => clients.map((c) => `${c.sync.status}@${c.sync.lastSeq}`).join(' ');
  try {
    await until(() => clients.every((c) => c.sync.status === 'synced' && c.sync.lastSeq === finalSeq), `every client to converge at ${finalSeq} (${where()})`, 30000);
  } catch (e) {
    if (process.env.FLEET_DEBUG) console.log(JSON.stringify(logs.filter((l) => l.kind === 'catch-up').slice(-30), null, 0), [...instances.values()].map((i) => `${i.name}:${i.alive}`));
    throw e;
  }
  const approved = (await Promise.all(approvals)).filter(Boolean);

  const wrong = observed.filter(({ seq, state }) => !history.has(seq) || !isDeepStrictEqual(JSON.parse(state), history.get(seq)));
  assert.deepEqual(wrong.map(({ client, seq }) => ({ client, seq })), [], 'no client was synced on a state the thread did not have at that seq');
  assert.ok(observed.length > CLIENTS * 10, `${observed.length} synced states checked`);
  for (const { sync } of clients) assert.deepEqual(plain(sync.state), history.get(finalSeq));
  assert.equal(new Set(clients.map((c) => c.sync.epoch)).size, 1, 'one epoch throughout: the restart continued it');

  const catchUps = logs.filter((l) => l.kind === 'catch-up');
  const covered = catchUps.filter((l) => l.lastSeq !== null && l.epoch === l.current && !(l.reason && SNAPSHOT_REASONS.has(l.reason)));
  assert.deepEqual(covered.filter((l) => l.mode === 'snapshot'), [], 'a catch-up the log covers is never a snapshot');
  const replays = covered.filter((l) => l.mode === 'replay').length;
  assert.ok(replays >= 3, `reconnects were answered by replays (${replays} of ${catchUps.length} catch-ups)`);
  assert.ok(link.stats.cuts > 0, 'the link did cut');

  assert.equal(approved.length, 4, 'one approval per proposal');
  const consumed = logs.filter((l) => l.kind === 'consume');
  let paid = 0;
  for (const { interruptId, amount, answers } of approved) {
    const firsts = consumed.filter((l) => l.interruptId === interruptId && l.ok && !l.replayed);
    assert.ok(answers.every((a) => a.ok === answers[0].ok), `${interruptId}: the same decision each time`);
    if (answers[0].ok) {
      assert.equal(firsts.length, 1, `${interruptId} consumed once`);
      assert.ok(answers.some((a) => a.replayed), `${interruptId}: the re-sent resume was answered from the record`);
      paid += amount;
    }
  }
  const redisClient = await server.redisStore({ url: redis.url }).client();
  assert.equal(Number(await redisClient.sendCommand(['GET', 'payments:total'])), paid, 'each approval paid once');
  await redisClient.close();

  for (const { sync, connection } of clients) {
    connection.close();
    await connection.done.catch(() => {});
    sync.dispose();
  }
  await link.close();
  await new Promise((resolve) => balancer.close(resolve));
  process.stdout.write(`# fleet: ${catchUps.length} catch-ups (${replays} replays, ${catchUps.filter((l) => l.mode === 'snapshot').length} snapshots), ${link.stats.cuts} cuts, ${approved.length} approvals\n`);
});
