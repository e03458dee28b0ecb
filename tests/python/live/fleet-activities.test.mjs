// A mixed fleet keeps a thread's activities through a faulty link (issue 40,
// docs/wire.md section 11): a Python instance (StateSyncMiddleware on a Redis
// store, tests/python/live/fleet_activity_server.py under uvicorn) and a Node
// proxy (createStateSyncProxy on the same store and prefix, in front of a Node
// AG-UI agent written with the real @ag-ui/encoder) serve the same threads on
// one real redis-server. Both agents play the same kind of run: a
// STATE_SNAPSHOT of RunAgentInput.state, then beats of cards (each an
// ACTIVITY_SNAPSHOT or an ACTIVITY_DELTA, followed by a STATE_DELTA). The
// cards' contents are shared by the two agents (as two replicas of one backend
// share a database: the test holds it and scripts each run from it), so a run
// on one instance continues, by deltas only, the cards a run on the other
// created. For each seed, runs of 2 threads land on an instance picked by the
// seeded PRNG (each thread's second run on the other instance than its
// first); every client reads through a seeded fault link (cuts, stalls,
// re-chunking) and each of its reconnects goes to an instance picked at
// random, as behind a load balancer: a cut client resumes on either. Per run:
// the thread's follower starts it; the agent holds half-way while a fresh
// client attaches on the other instance; after it, another fresh client
// attaches there (idle). Half-way through the seed the Python instance is
// stopped and a fresh one started on the same Redis and prefix; a fresh
// client attaches on it for each thread, and the next run of each is on it.
// Asserted:
//  - every client ends 'synced' on the thread's stored state and on the
//    stored content of every card (a Node store-bound emitter reads both), and
//    the store holds what the agents wrote last (no write lost, no fork);
//  - every card content a client showed as verified is one an agent held;
//  - a client never gets a lone ACTIVITY_DELTA: the first event of each card
//    it gets is its ACTIVITY_SNAPSHOT, whichever instance wrote the card and
//    whichever answers (an attach on the other one, a resume there, a
//    restarted Python instance).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { EventEncoder } from '@ag-ui/encoder';
import { recordVerified } from '../../support/activity-client.mjs';
import { prng, startFaultLink } from '../../support/fault-link.mjs';
import { until } from '../../support/until.mjs';
import { jsDir, pkg, plain } from '../../js/support.mjs';
import { RedisServer } from '../../js/redis-support.mjs';
import { parseSse, runInput } from '../../js/proxy-support.mjs';
import { startPythonServer } from './python-server.mjs';

const { createStateSyncProxy } = await import(join(jsDir, 'src', 'proxy.js'));
const { createStateEmitter } = await import(join(jsDir, 'src', 'index.js'));
const { redisStore } = await import(join(jsDir, 'src', 'server.js'));

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';
const SEEDS = [1, 2, 3];
const THREADS = 2;
const RUNS_PER_THREAD = 4; // two before the Python instance's restart, two after
const CARDS = ['card-0', 'card-1', 'card-2'];
const NAMES = ['node', 'python'];
const BACKOFF = { initialMs: 5, maxMs: 40, jitter: 0 };
const CUTS = { cutProbability: 0.6, cutAfterBytes: [200, 2500], stallProbability: 0.02, stallMs: 20, chunkBytes: [1, 700] };
const T = { timeout: 60000 };

let redis;
let nodeAgent;
const totals = { cuts: 0, connections: 0, crossResumes: 0, verified: 0 }; // over every seed, printed at the end

before(async () => {
  [redis, nodeAgent] = await Promise.all([RedisServer.start(), startNodeAgent()]);
});
after(async () => {
  await nodeAgent?.close();
  await redis?.close();
  process.stdout.write(`# mixed fleet activities: ${JSON.stringify(totals)}\n`);
});

// ---------------------------------------------------------------------------
// The shared cards: every content each held (the agents' database), and the
// scripts runs are played from.

/** One seeded change of a card's content: { patch, next }. */
function cardChange(content, random, step) {
  const roll = random();
  if (roll < 0.3) return { patch: [{ op: 'replace', path: '/counter', value: content.counter + 1 }], next: { ...content, counter: content.counter + 1 } };
  if (roll < 0.6 || content.items.length === 0) {
    const item = { id: `s${step}`, label: `step ${step} ${'é✓'.repeat(1 + Math.floor(random() * 3))}` };
    return { patch: [{ op: 'add', path: '/items/-', value: item }], next: { ...content, items: [...content.items, item] } };
  }
  if (roll < 0.8) return { patch: [{ op: 'remove', path: '/items/0' }], next: { ...content, items: content.items.slice(1) } };
  const title = `card at ${step}`;
  return { patch: [{ op: 'replace', path: '/title', value: title }], next: { ...content, title } };
}

/**
 * The cards run `k` of a thread touches: its first creates card-0 and card-1,
 * its second creates card-2 and continues the other two (on the other
 * instance), later ones continue a seeded choice of them, now and then with a
 * replacing snapshot first. [{ messageId, create, resnapshot, deltas }]
 */
function touchedCards(world, k, random) {
  const deltas = () => 2 + Math.floor(random() * 3);
  if (k === 0) return CARDS.slice(0, 2).map((messageId) => ({ messageId, create: true, deltas: deltas() }));
  if (k === 1) return CARDS.map((messageId) => ({ messageId, create: !world.cards.has(messageId), deltas: deltas() }));
  const picked = CARDS.filter(() => random() < 0.7);
  return (picked.length ? picked : [CARDS[Math.floor(random() * CARDS.length)]])
    .map((messageId) => ({ messageId, resnapshot: random() < 0.15, deltas: deltas() }));
}

/**
 * The script of run `k` of a thread: its beats ({ messageId, content } for an
 * ACTIVITY_SNAPSHOT, { messageId, patch } for an ACTIVITY_DELTA), cards
 * interleaved at random, each card's beats in order. Every content a beat
 * leaves is added to the card's history in `world` (what the agents held).
 */
function scriptRun(world, k, random) {
  const queues = touchedCards(world, k, random).map(({ messageId, create, resnapshot, deltas }) => {
    const beats = [];
    const history = world.cards.get(messageId) ?? [];
    world.cards.set(messageId, history);
    let content = history.at(-1);
    if (create || resnapshot) {
      content = { title: `${messageId} of ${world.threadId} (run ${k})`, counter: 0, items: [] };
      beats.push({ messageId, content });
      history.push(content);
    }
    for (let i = 0; i < deltas; i++) {
      const { patch, next } = cardChange(content, random, `${k}.${i}`);
      beats.push({ messageId, patch });
      history.push(next);
      content = next;
    }
    return beats;
  });
  const script = [];
  for (let open = queues.filter((q) => q.length); open.length; open = open.filter((q) => q.length)) {
    script.push(open[Math.floor(random() * open.length)].shift());
  }
  return script;
}

// ---------------------------------------------------------------------------
// The Node instance: an unchanged AG-UI agent playing the script, behind createStateSyncProxy.

/**
 * The run as an agent plays it (the Python agent, fleet_activity_server.py,
 * plays it the same way): `send(event)` each event; `wait()` at the hold beat.
 */
async function playRun(input, send, wait) {
  const { script, hold } = input.forwardedProps;
  const ids = { threadId: input.threadId, runId: input.runId };
  send({ type: 'RUN_STARTED', ...ids });
  const state = { ...input.state, counter: input.state?.counter ?? 0, last: input.runId };
  send({ type: 'STATE_SNAPSHOT', snapshot: state });
  for (const [i, beat] of script.entries()) {
    if (i === hold) await wait();
    if (beat.content !== undefined) send({ type: 'ACTIVITY_SNAPSHOT', messageId: beat.messageId, activityType: 'card', content: beat.content });
    else send({ type: 'ACTIVITY_DELTA', messageId: beat.messageId, activityType: 'card', patch: beat.patch });
    state.counter++;
    send({ type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/counter', value: state.counter }] });
  }
  send({ type: 'RUN_FINISHED', ...ids });
}

async function startNodeAgent() {
  const releases = new Map(); // runId -> { promise, release }
  const holding = new Set();
  const releaseOf = (runId) => {
    if (!releases.has(runId)) {
      let release;
      const promise = new Promise((resolve) => { release = resolve; });
      releases.set(runId, { promise, release });
    }
    return releases.get(runId);
  };
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const input = JSON.parse(body);
    const encoder = new EventEncoder({ accept: req.headers.accept });
    res.writeHead(200, { 'content-type': encoder.getContentType(), 'cache-control': 'no-cache' });
    await playRun(input, (event) => res.write(encoder.encode(event)), async () => {
      holding.add(input.runId);
      await releaseOf(input.runId).promise;
      holding.delete(input.runId);
    });
    res.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/agent`,
    holding: (runId) => holding.has(runId),
    release: (runId) => releaseOf(runId).release(),
    async close() {
      for (const { release } of releases.values()) release();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function startNodeInstance(prefix) {
  const store = redisStore({ url: redis.url, prefix });
  const handler = createStateSyncProxy({ upstream: nodeAgent.url, store });
  // Each response closes its connection (as the Python instance's do): each request is one
  // connection of the fault link, with its own seeded faults.
  const server = createServer((req, res) => {
    res.shouldKeepAlive = false;
    handler(req, res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    holding: async (runId) => nodeAgent.holding(runId),
    release: async (runId) => nodeAgent.release(runId),
    async close() {
      handler.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await store.close();
    },
  };
}

async function startPythonInstance(prefix) {
  const python = await startPythonServer('fleet_activity_server.py', [redis.url, prefix]);
  const base = `http://127.0.0.1:${python.port}`;
  return {
    port: python.port,
    holding: async (runId) => (await (await fetch(`${base}/holding/${encodeURIComponent(runId)}`)).json()).holding,
    async release(runId) {
      const response = await fetch(`${base}/release/${encodeURIComponent(runId)}`, { method: 'POST' });
      assert.equal(response.status, 200);
      await response.arrayBuffer();
    },
    close: () => python.close(),
  };
}

// ---------------------------------------------------------------------------
// The fleet as clients reach it: each instance behind its own seeded fault link.

async function startFleet(seed) {
  const prefix = `mixed-acts-${seed}:`;
  // loops: every client's reconnect loop; balancers: how many PRNGs loops took (each picks its reconnects'
  // instances from its own); held: [instance, runId] of a run whose agent may wait for a release.
  const fleet = { prefix, seed, instances: {}, links: {}, linkSeeds: 0, retired: [], loops: new Set(), balancers: 0, held: null, crossResumes: 0 };
  const [node, python] = await Promise.all([startNodeInstance(prefix), startPythonInstance(prefix)]);
  await Promise.all([putBehindLink(fleet, 'node', node), putBehindLink(fleet, 'python', python)]);
  fleet.url = (name) => fleet.links[name].url('/agent');
  fleet.reader = redisStore({ url: redis.url, prefix });
  return fleet;
}

/** `instance` serves as `name` from now on, behind a new fault link (its own seed). */
async function putBehindLink(fleet, name, instance) {
  const seed = fleet.seed * 100 + fleet.linkSeeds++;
  fleet.instances[name] = instance;
  fleet.links[name] = await startFaultLink({ target: { host: '127.0.0.1', port: instance.port }, seed, ...CUTS });
}

/** Stops the Python instance and starts a fresh one on the same Redis and prefix, behind a new link. */
async function restartPython(fleet) {
  await fleet.instances.python.close();
  fleet.retired.push(fleet.links.python);
  await putBehindLink(fleet, 'python', await startPythonInstance(fleet.prefix));
}

/** The links' cuts and connections so far (the Python instance's links before its restart too). */
function linkStats(fleet) {
  const links = [...Object.values(fleet.links), ...fleet.retired];
  return { cuts: links.reduce((n, l) => n + l.stats.cuts, 0), connections: links.reduce((n, l) => n + l.stats.connections, 0) };
}

async function stopFleet(fleet) {
  // After a failure: clients stop reconnecting, and no agent waits for a release (the instances' close would wait).
  for (const loop of fleet.loops) loop.close();
  if (fleet.held) await fleet.instances[fleet.held[0]].release(fleet.held[1]).catch(() => {});
  const { cuts, connections } = linkStats(fleet);
  totals.cuts += cuts;
  totals.connections += connections;
  for (const link of [...Object.values(fleet.links), ...fleet.retired]) await link.close();
  await Promise.all(Object.values(fleet.instances).map((instance) => instance.close()));
  await fleet.reader.close();
}

/** The thread as the store holds it: a Node emitter opened on its key (its state, and every card's content). */
async function stored(fleet, threadId) {
  const emitter = await createStateEmitter({ store: fleet.reader, key: threadId });
  try {
    await emitter.activities.sync();
    const cards = {};
    const cardSeqs = {};
    for (const id of CARDS) {
      const content = emitter.activities.content(id);
      if (content === undefined) continue;
      cards[id] = plain(content);
      cardSeqs[id] = emitter.activities.seq(id);
    }
    return { seq: emitter.seq, epoch: emitter.epoch, state: plain(emitter.state), cards, cardSeqs };
  } finally {
    emitter.dispose();
  }
}

// ---------------------------------------------------------------------------
// Clients: createStateSync({ activities: true }) + connectStateSync, each
// connection recorded (its instance, headers and the bytes the client read).

async function newClient(name) {
  const sync = await pkg.createStateSync({ activities: true });
  const { verified, off } = recordVerified(sync);
  return { name, sync, verified, off, responses: [] };
}

/** The response as the client reads it; every chunk is added to entry.text before the client gets it. */
function recorded(response, entry) {
  if (!response.body) return response;
  const decoder = new TextDecoder();
  const body = response.body.pipeThrough(new TransformStream({
    transform(chunk, controller) {
      entry.text += decoder.decode(chunk, { stream: true });
      controller.enqueue(chunk);
    },
  }));
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * Connects `client` for one run (`input`, POSTed) or one attach (`attach`: a
 * thread id, GET with X-AGUI-Attach). Its first connection goes to instance
 * `first`, each reconnect to one picked at random (a load balancer; a PRNG of
 * the loop's own, so that the seed's plan does not depend on how many cuts
 * there were), or to `first` again with `stay`. Returns { settled, error,
 * close } filled in once the loop ends, and `done`.
 */
function connect(client, fleet, { first, input, attach, stay = false }) {
  const random = prng(fleet.seed * 1009 + fleet.balancers++);
  let n = 0;
  const via = async (_target, init = {}) => {
    const instance = n++ === 0 || stay ? first : NAMES[Math.floor(random() * NAMES.length)];
    const entry = { instance, lastEventId: new Headers(init.headers).get('last-event-id'), text: '' };
    client.responses.push(entry);
    const response = await fetch(fleet.url(instance), init);
    entry.status = response.status;
    entry.attach = response.headers.get('x-agui-attach');
    return recorded(response, entry);
  };
  const connection = pkg.connectStateSync(client.sync, {
    url: fleet.url(first),
    fetch: via,
    backoff: BACKOFF,
    ...(input ? { body: () => input } : { init: { headers: { 'x-agui-attach': attach } } }),
  });
  const loop = { settled: false, error: null, close: connection.close };
  fleet.loops.add(loop);
  loop.done = connection.done.then(() => { loop.settled = true; }, (error) => { loop.error = error; loop.settled = true; });
  return loop;
}

const named = (what) => (typeof what === 'function' ? what() : what);

/** Waits for `condition()`; fails at once if the loop ended first (a refusal, say), naming what it waited for. */
function during(loop, condition, what) {
  return until(async () => {
    if (await condition()) return true;
    if (loop.settled) throw new Error(`the client's loop ended (${loop.error?.message ?? 'no error'}) waiting for ${named(what)}`, { cause: loop.error });
    return false;
  }, what);
}

/** Where a client stands, for a failure's message: its status, its cards, its connections. */
function standing(client) {
  const cards = Object.values(client.sync.activities).map((a) => [a.messageId, a.status, a.lastSeq]);
  const connections = client.responses.map((r) => `${r.instance}${r.lastEventId ? `@${r.lastEventId}` : ''}:${r.status ?? 'cut'}${r.attach ? `/${r.attach}` : ''}`);
  return `status ${client.sync.status}, cards ${JSON.stringify(cards)}, connections ${connections.join(' ')}`;
}

/** The loop's end, with a deadline that names where the client stood. */
async function finished(loop, client, what) {
  await until(() => loop.settled, () => `${what} to end (${standing(client)})`);
  if (loop.error) throw new Error(`${what}: ${loop.error.message} (${standing(client)})`, { cause: loop.error });
}

/** The complete events of one recorded response. */
const eventsOf = (entry) => parseSse(entry.text.slice(0, entry.text.lastIndexOf('\n\n') + 2)).filter((e) => e.data !== undefined).map((e) => e.data);

// ---------------------------------------------------------------------------
// What every client must show.

/**
 * The store holds what the agents wrote last: the world's state and every
 * card's last content, on one line (one epoch, its seq only growing).
 */
function assertStoreHoldsWorld(line, world, what) {
  if (world.line) {
    assert.equal(line.epoch, world.line.epoch, `${what}: the thread keeps its epoch`);
    assert.ok(line.seq >= world.line.seq, `${what}: the stored seq never goes back (${world.line.seq} -> ${line.seq})`);
  }
  world.line = { seq: line.seq, epoch: line.epoch };
  assert.deepEqual(line.state, world.state, `${what}: the stored state is the last run's`);
  const last = Object.fromEntries([...world.cards].map(([id, history]) => [id, history.at(-1)]));
  assert.deepEqual(line.cards, last, `${what}: the stored cards are the agents' last contents`);
}

/**
 * `client` ends synced on the stored state and every stored card; every
 * content it showed as verified is one an agent held; the first event of
 * each card it ever got is the card's ACTIVITY_SNAPSHOT. Returns how many
 * verified contents were checked.
 */
function assertClient(client, line, world, what) {
  const { sync } = client;
  const where = `${what} (${standing(client)})`;
  assert.equal(sync.status, 'synced', `${where}: the state synced`);
  assert.deepEqual([sync.lastSeq, sync.epoch], [line.seq, line.epoch], `${where}: at the stored seq and epoch`);
  assert.deepEqual(plain(sync.state), line.state, `${where}: on the stored state`);
  for (const [id, content] of Object.entries(line.cards)) {
    const mirror = sync.activities[id];
    assert.ok(mirror, `${where}: the client holds ${id} (it holds ${Object.keys(sync.activities).join(', ') || 'none'})`);
    assert.equal(mirror.status, 'synced', `${where}: ${id} synced (${JSON.stringify(mirror.resync)})`);
    assert.deepEqual(plain(mirror.content), content, `${where}: ${id} on the stored content`);
    assert.equal(mirror.lastSeq, line.cardSeqs[id], `${where}: ${id} at the stored seq`);
  }
  for (const { messageId, lastSeq, content } of client.verified) {
    assert.ok((world.cards.get(messageId) ?? []).some((held) => isDeepStrictEqual(held, content)),
      `${where}: ${messageId} at seq ${lastSeq} shown verified with content no agent held: ${JSON.stringify(content)}`);
  }
  const first = {};
  for (const [i, entry] of client.responses.entries()) {
    for (const e of eventsOf(entry)) {
      if (e.type !== 'ACTIVITY_SNAPSHOT' && e.type !== 'ACTIVITY_DELTA') continue;
      first[e.messageId] ??= { type: e.type, connection: i, instance: entry.instance };
    }
  }
  for (const id of Object.keys(line.cards)) {
    const got = first[id];
    assert.ok(got, `${where}: ${id} never reached it`);
    assert.equal(got.type, 'ACTIVITY_SNAPSHOT', `${where}: ${id} first reached it as ${got.type} (connection ${got.connection}, on ${got.instance})`);
  }
  return client.verified.length;
}

/** Counts the reconnects that resumed a run on another instance than the client's first connection. */
function crossResumes(client) {
  return client.responses.filter((r, i) => i > 0 && r.lastEventId && r.instance !== client.responses[0].instance).length;
}

// ---------------------------------------------------------------------------

/**
 * Run `k` of `thread` on instance `writer`: the follower starts it; the agent
 * holds half-way until a fresh client attached on the other instance; after
 * it, a fresh client attaches there (idle). Every client is then checked
 * against the store.
 */
async function oneRun(fleet, thread, k, writer, random) {
  const other = writer === 'node' ? 'python' : 'node';
  const runId = `${thread.world.threadId}-r${k}`;
  const what = `seed ${fleet.seed}, ${thread.world.threadId}, run ${k} on ${writer}`;
  const script = scriptRun(thread.world, k, random);
  const hold = Math.floor(script.length / 2);
  const input = runInput(thread.world.threadId, runId, { state: plain(thread.follower.sync.state), forwardedProps: { script, hold } });
  fleet.held = [writer, runId];
  const starting = connect(thread.follower, fleet, { first: writer, input });
  // The agent waits half-way, and the follower got every event before: the agent's holding alone
  // does not say that the instance has granted the requester and named the run live in the store.
  const halfWay = thread.world.state.counter + hold;
  await during(starting, async () => thread.follower.sync.state?.counter === halfWay && await fleet.instances[writer].holding(runId),
    () => `${what}: the follower to get the run's first half (counter ${thread.follower.sync.state?.counter} of ${halfWay})`);
  const attacher = await newClient(`attacher of ${runId}`);
  const attaching = connect(attacher, fleet, { first: other, attach: thread.world.threadId });
  await during(attaching, () => attacher.responses.some((r) => r.attach === 'run'),
    () => `${what}: the attach on ${other} to join the run (${standing(attacher)})`);
  await fleet.instances[writer].release(runId);
  fleet.held = null;
  await finished(starting, thread.follower, `${what}: the follower`);
  await finished(attaching, attacher, `${what}: the attacher on ${other}`);
  const idle = await newClient(`idle attach after ${runId}`);
  await finished(connect(idle, fleet, { first: other, attach: thread.world.threadId }), idle, `${what}: the idle attach on ${other}`);
  thread.world.state = { counter: thread.world.state.counter + script.length, last: runId };
  const line = await stored(fleet, thread.world.threadId);
  assertStoreHoldsWorld(line, thread.world, what);
  totals.verified += assertClient(thread.follower, line, thread.world, `${what}: the follower`);
  totals.verified += assertClient(attacher, line, thread.world, `${what}: the mid-run attach on ${other}`);
  totals.verified += assertClient(idle, line, thread.world, `${what}: the idle attach on ${other}`);
  fleet.crossResumes += crossResumes(attacher) + crossResumes(idle);
  for (const c of [attacher, idle]) {
    c.off();
    c.sync.dispose();
  }
}

/**
 * After the Python instance's restart: a fresh client on the new instance
 * (its reconnects too) gets every card from it, each by its snapshot.
 */
async function freshOnRestarted(fleet, thread) {
  const what = `seed ${fleet.seed}, ${thread.world.threadId}: a fresh attach on the restarted Python instance`;
  const client = await newClient('after the restart');
  await finished(connect(client, fleet, { first: 'python', attach: thread.world.threadId, stay: true }), client, what);
  const line = await stored(fleet, thread.world.threadId);
  assertStoreHoldsWorld(line, thread.world, what);
  assert.deepEqual(Object.keys(line.cards).sort(), CARDS, `${what}: the store kept every card`);
  totals.verified += assertClient(client, line, thread.world, what);
  const got = new Set(client.responses.flatMap(eventsOf).filter((e) => e.type === 'ACTIVITY_SNAPSHOT').map((e) => e.messageId));
  assert.deepEqual([...got].sort(), CARDS, `${what}: every card came by its snapshot`);
  client.off();
  client.sync.dispose();
}

for (const seed of SEEDS) {
  test(`seed ${seed}: a Python instance and a Node proxy on one redis-server continue each other's activities through faulty links`, T, async (t) => {
    const random = prng(seed);
    const fleet = await startFleet(seed);
    t.after(() => stopFleet(fleet));
    const threads = [];
    for (let i = 0; i < THREADS; i++) {
      const world = { threadId: `mixed-${seed}-${i}`, state: { counter: 0 }, cards: new Map() };
      threads.push({ world, follower: await newClient(`follower ${i}`), writers: [] });
    }
    // Each thread's first two runs on different instances, at random which first; the first after the
    // restart on the fresh Python instance (its cards come from the store); the others at random.
    const half = RUNS_PER_THREAD / 2;
    const writerOf = (thread, k) => {
      const pick = NAMES[Math.floor(random() * NAMES.length)];
      if (k === 1) return thread.writers[0] === 'node' ? 'python' : 'node';
      return k === half ? 'python' : pick;
    };
    for (let k = 0; k < RUNS_PER_THREAD; k++) {
      if (k === half) {
        await restartPython(fleet);
        for (const thread of threads) await freshOnRestarted(fleet, thread);
      }
      for (const thread of threads) {
        const writer = writerOf(thread, k);
        thread.writers.push(writer);
        await oneRun(fleet, thread, k, writer, random);
      }
    }
    for (const thread of threads) {
      fleet.crossResumes += crossResumes(thread.follower);
      thread.follower.off();
      thread.follower.sync.dispose();
    }
    const { cuts, connections } = linkStats(fleet);
    assert.ok(cuts >= 4 && fleet.crossResumes >= 1, `the links cut (${cuts} cuts) and a cut client resumed on the other instance (${fleet.crossResumes})`);
    totals.crossResumes += fleet.crossResumes;
    const writers = JSON.stringify(threads.map((th) => th.writers));
    process.stdout.write(`# seed ${seed}: writers ${writers}, ${cuts} cuts in ${connections} connections, ${fleet.crossResumes} resumes on the other instance\n`);
  });
}
