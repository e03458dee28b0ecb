// Run logs in the store (issue 26, item 1), with real processes: two
// agui-state-sync-proxy CLI instances (--redis) on one real redis-server,
// behind a round-robin TCP balancer (tests/support/balancer.mjs), in front of
// one plain AG-UI backend (tests/support/upstreams.mjs) whose runs end only
// when the test releases them (faults.hold): "mid-run" is a fact, not a race.
// The run is always started on instance A (its holder); clients reach the
// fleet through the balancer with StateSyncHttpAgent.
//  - a resume on the instance that does not hold the run is exact: the events
//    after Last-Event-ID, byte for byte as the holder sent them, then live;
//  - B is killed (SIGKILL) while clients stream through it: every client
//    resumes on A, chat text once, state synced, the upstream ran once;
//  - A, the holder, is killed (SIGKILL): every client, wherever it was, gets
//    one RUN_ERROR 'run-lost' from B; every event any client received is in
//    the stored log, byte for byte (nothing was sent that was not committed);
//    every state a client held was one the upstream held, and a connect()
//    afterwards brings each client to the thread's committed state.
//  - B, then in another fleet A, is killed while clients reach A, B and the
//    balancer through faulty links (cuts, re-chunking): the same outcomes,
//    every cut resumed;
//  - clients reach the fleet through a faulty link (cuts, re-chunking) in front
//    of the balancer: every cut resumes on whichever instance the balancer
//    picks, and each client converges on the upstream's state; the instances'
//    metrics add up to what they did.
// And with two proxies in this process (short grace periods and heartbeats):
// a run whose clients all moved to the other instance is not abandoned by its
// holder; an abort asked at the other instance aborts it, whether or not that
// instance serves any of the run's clients; a POST of the same
// runId at the other instance joins the run instead of starting the agent again;
// the stored log is trimmed by count and bytes and expires graceMs after the run.
import { runBase } from '../../js/src/server/store/key-layout.js';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startBalancer } from '../support/balancer.mjs';
import { startFaultLink } from '../support/fault-link.mjs';
import { buildScript, INITIAL_STATE, messageTexts, startUpstream } from '../support/upstreams.mjs';
import { RedisServer } from './redis-support.mjs';
import { jsDir, plain } from './support.mjs';
import { createStateSyncProxy, eventWatcher, isOneOf, keepBody, metric, metricSum, runInput, readStream, scrapeCli, serve, startProxyCli, until } from './proxy-support.mjs';

const { StateSyncHttpAgent } = await import(join(jsDir, 'src', 'ag-ui.js'));
const { redisStore } = await import(join(jsDir, 'src', 'server.js'));

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';

const T = { timeout: 90000 };
const BACKOFF = { initialMs: 5, maxMs: 100 };
// Long enough that a loaded machine never stalls a live holder past it: only a killed one loses its runs.
const LEASE_MS = 5000;
const BRIEF = 'Plan the team offsite: venue, flights, dinner, budget. '.repeat(200);
const INITIAL = { ...INITIAL_STATE, brief: BRIEF };

let redis;
before(async () => { redis = await RedisServer.start(); });
after(async () => { await redis?.close(); });

function gate() {
  let release;
  const promise = new Promise((resolve) => { release = resolve; });
  return { promise, release };
}

/** Upstream, proxies A and B (CLI processes on one Redis, one prefix per test), a balancer over them. */
async function fleet(t, prefix, upstreamOptions) {
  const upstream = await startUpstream(upstreamOptions);
  const args = ['--upstream', upstream.url, '--port', '0', '--redis', redis.url, '--redis-prefix', prefix,
    '--run-lease-ms', String(LEASE_MS), '--grace-ms', '20000', '--ops-port', '0'];
  const [a, b] = await Promise.all([startProxyCli(args), startProxyCli(args)]);
  const ports = [a, b].map((p) => Number(new URL(p.url).port));
  const balancer = await startBalancer(ports);
  const lb = `http://127.0.0.1:${balancer.address().port}/agent`;
  t.after(async () => {
    for (const p of [a, b]) p.child.kill('SIGKILL');
    balancer.close();
    await upstream.close();
  });
  return { upstream, a, b, lb };
}

/** The platform fetch, keeping every response's bytes (tee) to compare with the stored log. */
function recordingFetch(log, route = (url) => url) {
  return async (url, init = {}) => {
    const entry = { url: route(String(url), log.length), text: '', status: null };
    log.push(entry);
    const response = await fetch(entry.url, init);
    entry.status = response.status;
    entry.resume = response.headers.get('x-agui-resume');
    entry.attach = response.headers.get('x-agui-attach');
    return keepBody(response, entry);
  };
}

const count = (types, type) => types.filter((x) => x === type).length;

/** Every complete SSE frame with an id in a recorded response: [{ id, text }]. */
function framesOf(entry) {
  const complete = entry.text.slice(0, entry.text.lastIndexOf('\n\n') + 2);
  return complete.split('\n\n').filter((block) => block.startsWith('id: ')).map((block) => ({ id: block.slice(4, block.indexOf('\n')), text: `${block}\n\n` }));
}

/** The stored log of run `key` under `prefix`, read with a plain Redis client: Map n -> framed text. */
async function storedLog(prefix, key) {
  const { createClient } = await import('redis');
  const client = createClient({ url: redis.url });
  await client.connect();
  try {
    const entries = await client.sendCommand(['XRANGE', `${runBase(prefix, key)}:log`, '-', '+']);
    const text = (fields) => fields.find((_, i) => i % 2 === 1 && fields[i - 1] === 't');
    return new Map(entries.map(([id, fields]) => [Number(id.split('-')[0]), text(fields)]));
  } finally {
    await client.close();
  }
}

/** After a finished run: every client saw one start, one finish, the text once, only upstream states, and ends on `final`. */
function assertFinishedEverywhere(agents, watchers, request, final) {
  for (const [i, { seen }] of watchers.entries()) {
    assert.deepEqual(seen.errors, [], `client ${i}`);
    assert.equal(count(seen.types, 'RUN_STARTED'), 1, `client ${i}: one RUN_STARTED`);
    assert.equal(count(seen.types, 'RUN_FINISHED'), 1, `client ${i}: one RUN_FINISHED`);
    assert.deepEqual(messageTexts(seen.events), messageTexts(request.events), `client ${i}: the text, once`);
    assert.deepEqual(seen.violations, [], `client ${i}: synced only on states the upstream held`);
    assert.deepEqual(plain(agents[i].state), final, `client ${i}: converged`);
    assert.equal(agents[i].stateSync.status, 'synced');
  }
}

/** After the holder was killed: client `i` got one RUN_ERROR run-lost, no finish, and synced only on upstream states. */
function assertRunLost(seen, i) {
  const errors = seen.events.filter((e) => e.type === 'RUN_ERROR');
  assert.deepEqual(errors.map((e) => e.code), ['run-lost'], `client ${i}: one RUN_ERROR run-lost`);
  assert.equal(count(seen.types, 'RUN_FINISHED'), 0);
  assert.deepEqual(seen.violations, [], `client ${i}: synced only on states the upstream held`);
}

/** The thread's state stays where the last committed event left it: connect() brings every client to one state the upstream held. */
async function assertOneCommittedState(agents, history) {
  const states = [];
  for (const agent of agents) {
    await agent.connectAgent({});
    assert.equal(agent.stateSync.status, 'synced');
    states.push(plain(agent.state));
  }
  for (const state of states) assert.deepEqual(state, states[0], 'every client on the same state');
  assert.ok(isOneOf(states[0], history), 'a state the upstream held');
}

/**
 * A fleet (prefix, upstream script `seed`, its end held by `hold`) whose three
 * clients on thread 't-faulty' reach it through faulty links: one in front of
 * each way in (A for the starter's first request, B for the two attached
 * clients' first, the balancer for every request after). Each link re-chunks
 * and cuts every response until the links cut two (then heals: `healed`).
 * Returns once the run is going and every client has chat text.
 */
async function faultyFleet(t, prefix, seed, hold) {
  const f = await fleet(t, prefix, { shape: 'docs', script: buildScript({ seed, steps: 16 }), stepMs: 2, initialState: INITIAL, faults: { hold } });
  const port = (url) => Number(new URL(url).port);
  const links = await Promise.all([f.a.url, f.b.url, f.lb].map((url, i) => startFaultLink({
    target: { host: '127.0.0.1', port: port(url) }, seed: seed * 10 + i, cutProbability: 1, cutAfterBytes: [400, 6000], chunkBytes: [1, 512] })));
  t.after(() => Promise.all(links.map((link) => link.close())));
  const cuts = () => links.reduce((sum, link) => sum + link.stats.cuts, 0);
  const healed = until(() => cuts() >= 2, 'two cuts').then(() => { for (const link of links) link.setFaults({ cutProbability: 0 }); });
  const [viaA, viaB, viaLb] = links.map((link) => link.url('/agent'));
  const firstVia = [viaA, viaB, viaB];
  const agents = firstVia.map((first) => new StateSyncHttpAgent({ url: viaLb, threadId: 't-faulty', fetch: recordingFetch([], (url, k) => (k === 0 ? first : url)), stateSync: { backoff: BACKOFF } }));
  await Promise.all(agents.map((agent) => agent.ready));
  const watchers = agents.map((agent) => eventWatcher(agent, () => f.upstream.history('t-faulty')));
  const runs = [agents[0].runAgent({ runId: `run-${prefix}` }, watchers[0].subscriber)];
  await until(() => watchers[0].seen.types.includes('TEXT_MESSAGE_CONTENT'), 'chat text at the starter');
  agents.slice(1).forEach((agent, i) => runs.push(agent.connectAgent({}, watchers[i + 1].subscriber)));
  await until(() => watchers.every((w) => w.seen.types.includes('TEXT_MESSAGE_CONTENT')), 'chat text at every client');
  return { f, agents, watchers, runs, healed, cuts };
}

describe('run logs in Redis: two proxy processes', () => {
  test('a resume on the instance that does not hold the run is exact, byte for byte, then live', T, async (t) => {
    const hold = gate();
    const f = await fleet(t, 'exact:', { shape: 'docs', script: buildScript({ seed: 3, steps: 12 }), stepMs: 2, initialState: INITIAL, faults: { hold: hold.promise } });
    const threadId = 't-exact';
    // The starter reads the first events from A, then its connection is gone.
    const first = await readStream(f.a.url, { input: runInput(threadId, 'run-exact'), stop: (events) => events.some((e) => e.data.type === 'TEXT_MESSAGE_CONTENT') });
    const last = first.events.at(-1).id;
    const n = Number(last.split(':')[1]);
    // The same point resumed on B (no state position: the events as they were), while A's run goes on.
    // B's first bytes (the preamble, then a heartbeat) are written as B attaches the client: the run's
    // end, released then, reaches B live. (Not on an event's text: the starter's last read may have
    // held the run's every event up to the hold, when A's writes arrived together.)
    const onB = readStream(f.b.url, { method: 'GET', headers: { 'last-event-id': last }, onText: () => hold.release() });
    const resumedB = await onB;
    assert.equal(resumedB.status, 200);
    assert.equal(resumedB.headers.get('x-agui-resume'), 'exact');
    assert.equal(resumedB.events.at(-1).data.type, 'RUN_FINISHED', 'B followed the run live to its end');
    // A, the holder, answers the same resume after the run: the same bytes.
    const onA = await readStream(f.a.url, { method: 'GET', headers: { 'last-event-id': last } });
    assert.equal(onA.headers.get('x-agui-resume'), 'exact');
    const framed = (r) => r.events.map((e) => `${e.id}\n${JSON.stringify(e.data)}`);
    assert.deepEqual(framed(resumedB), framed(onA), 'every event after the id, the same on both instances');
    const key = last.split(':')[0];
    const stored = await storedLog('exact:', key);
    for (const e of resumedB.events) assert.equal(stored.get(Number(e.id.split(':')[1])), `id: ${e.id}\ndata: ${JSON.stringify(e.data)}\n\n`);
    assert.equal(resumedB.events[0].id, `${key}:${n + 1}`, 'from the event right after the resumed one');
    assert.equal(f.upstream.requests.length, 1, 'the upstream ran once');
  });

  test('the instance that does not hold the run is killed: every client resumes on the holder, text once, state synced', T, async (t) => {
    const hold = gate();
    const f = await fleet(t, 'killb:', { shape: 'docs', script: buildScript({ seed: 5, steps: 16 }), stepMs: 2, initialState: INITIAL, faults: { hold: hold.promise } });
    const threadId = 't-kill-b';
    const history = () => f.upstream.history(threadId);
    const logs = [[], [], []];
    // The starter's first request goes to A (the holder); everything after through the balancer.
    const starter = new StateSyncHttpAgent({ url: f.lb, threadId, fetch: recordingFetch(logs[0], (url, i) => (i === 0 ? f.a.url : url)), stateSync: { backoff: BACKOFF } });
    // Two attached clients on B (their first request), then the balancer.
    const attached = [1, 2].map((i) => new StateSyncHttpAgent({ url: f.lb, threadId, fetch: recordingFetch(logs[i], (url, k) => (k === 0 ? f.b.url : url)), stateSync: { backoff: BACKOFF } }));
    const agents = [starter, ...attached];
    await Promise.all(agents.map((agent) => agent.ready));
    const watchers = agents.map((agent) => eventWatcher(agent, history));
    const runs = [starter.runAgent({ runId: 'run-kill-b' }, watchers[0].subscriber)];
    await until(() => watchers[0].seen.types.includes('TEXT_MESSAGE_CONTENT'), 'chat text at the starter');
    attached.forEach((agent, i) => runs.push(agent.connectAgent({}, watchers[i + 1].subscriber)));
    await until(() => watchers.every((w) => w.seen.types.includes('TEXT_MESSAGE_CONTENT')), 'chat text at every client');
    const onB = await scrapeCli(f.b);
    f.b.child.kill('SIGKILL');
    await until(() => logs.slice(1).every((log) => log.length >= 2 && log.at(-1).status === 200 && log.at(-1).url === f.lb), 'the attached clients to resume through the balancer');
    hold.release();
    await Promise.all(runs);

    const [request] = f.upstream.requests;
    assert.equal(f.upstream.requests.length, 1, 'the upstream ran once');
    assert.equal(request.completed, true);
    const final = f.upstream.state(threadId);
    assertFinishedEverywhere(agents, watchers, request, final);
    for (const log of logs.slice(1)) assert.ok(log.slice(1).some((e) => e.resume === 'exact' || e.resume === 'caught-up'), 'resumed on A');
    // Each instance's metrics say what it did. B: two clients attached to a run it did not start.
    assert.equal(metric(onB, 'agui_proxy_runs_started_total'), 0, 'B started no run');
    assert.equal(metric(onB, 'agui_proxy_attaches_total{found="run"}'), 2, 'B: the two attaches, to the running run');
    assert.equal(metricSum(onB, 'agui_proxy_resumes_total'), 0, 'B: no resume yet');
    // A: the one run it started, and every resume it answered after B died (the balancer's, B being gone).
    const onA = await scrapeCli(f.a);
    const answeredByA = [...logs[0], ...logs.slice(1).flatMap((log) => log.slice(1))];
    assert.equal(metric(onA, 'agui_proxy_runs_started_total'), 1, 'A started the upstream run once');
    // Every stream A answered with X-AGUI-Resume was a resume after an event, or an attach (after none).
    const joined = metricSum(onA, 'agui_proxy_resumes_total') + metricSum(onA, 'agui_proxy_attaches_total');
    assert.equal(joined, answeredByA.filter((e) => e.resume !== null).length, 'A: one resume or attach per stream it joined a client to');
    assert.equal(metric(onA, 'agui_proxy_runs_lost_total'), 0);
    assert.equal(metric(onA, 'agui_proxy_live_runs'), 0, 'the run ended');
    const received = answeredByA.reduce((sum, e) => sum + Buffer.byteLength(e.text), 0);
    assert.ok(metric(onA, 'agui_proxy_client_bytes_total') >= received, 'A counted every byte its clients read');
    for (const agent of agents) agent.dispose();
  });

  test('the holder is killed: every client gets RUN_ERROR run-lost from the other instance; nothing it got was uncommitted; state consistent', T, async (t) => {
    const never = new Promise(() => {});
    const f = await fleet(t, 'killa:', { shape: 'docs', script: buildScript({ seed: 8, steps: 16 }), stepMs: 2, initialState: INITIAL, faults: { hold: never } });
    const threadId = 't-kill-a';
    const history = () => f.upstream.history(threadId);
    const logs = [[], [], [], []];
    const starter = new StateSyncHttpAgent({ url: f.lb, threadId, fetch: recordingFetch(logs[0], (url, i) => (i === 0 ? f.a.url : url)), stateSync: { backoff: BACKOFF } });
    // Attached clients: one on A, one on B, one through the balancer.
    const firstUrl = [f.a.url, f.b.url, f.lb];
    const attached = firstUrl.map((first, i) => new StateSyncHttpAgent({ url: f.lb, threadId, fetch: recordingFetch(logs[i + 1], (url, k) => (k === 0 ? first : url)), stateSync: { backoff: BACKOFF } }));
    const agents = [starter, ...attached];
    await Promise.all(agents.map((agent) => agent.ready));
    const watchers = agents.map((agent) => eventWatcher(agent, history));
    const runs = [starter.runAgent({ runId: 'run-kill-a' }, watchers[0].subscriber)];
    await until(() => watchers[0].seen.types.includes('TEXT_MESSAGE_CONTENT'), 'chat text at the starter');
    attached.forEach((agent, i) => runs.push(agent.connectAgent({}, watchers[i + 1].subscriber)));
    await until(() => watchers.every((w) => w.seen.types.includes('TEXT_MESSAGE_CONTENT')), 'chat text at every client');
    f.a.child.kill('SIGKILL');
    await Promise.all(runs);

    const key = framesOf(logs[0][0])[0].id.split(':')[0];
    const stored = await storedLog('killa:', key);
    const finalN = Math.max(...stored.keys());
    const lost = JSON.parse(stored.get(finalN).split('\ndata: ')[1]);
    assert.equal(lost.type, 'RUN_ERROR');
    assert.equal(lost.code, 'run-lost', 'the stored log ends with run-lost');
    for (const [i, { seen }] of watchers.entries()) {
      assertRunLost(seen, i);
      // Every framed event this client received is the stored one, byte for byte.
      for (const entry of logs[i]) {
        for (const frame of framesOf(entry)) {
          const [frameKey, n] = frame.id.split(':');
          if (frameKey !== key || stored.get(Number(n)) === frame.text) continue;
          // Otherwise it was written for that connection only: a catch-up (from the thread's committed state).
          const event = JSON.parse(frame.text.split('\ndata: ')[1]);
          assert.ok(event.type === 'STATE_SNAPSHOT' || event.type === 'STATE_DELTA' || event.name === 'agui-state-sync.events-lost',
            `client ${i}: event ${n} is the committed one or a catch-up, not ${frame.text}`);
        }
      }
    }
    assert.ok(logs.some((log) => log.some((e) => e.url === f.lb && e.status === 200)), 'clients came back through the balancer');
    await assertOneCommittedState(agents, history());
    // B's metrics: it started nothing and ended the lost run for its clients.
    const onB = await scrapeCli(f.b);
    assert.equal(metric(onB, 'agui_proxy_runs_started_total'), 0, 'B started no run');
    assert.equal(metric(onB, 'agui_proxy_runs_lost_total'), 1, 'B ended the one lost run');
    assert.equal(metric(onB, 'agui_proxy_live_runs'), 0);
    for (const agent of agents) agent.dispose();
  });

  for (const seed of [1, 2]) {
    test(`seed ${seed}: clients through a faulty link in front of the balancer: every cut resumes on either instance, text once, state synced`, T, async (t) => {
      const f = await fleet(t, `flaky${seed}:`, { shape: 'docs', script: buildScript({ seed, steps: 24 }), stepMs: 20, initialState: INITIAL });
      // Every response is cut (before or after its first events) until three were; then the link only re-chunks.
      const link = await startFaultLink({ target: { host: '127.0.0.1', port: Number(new URL(f.lb).port) }, seed, cutProbability: 1, cutAfterBytes: [120, 4000], chunkBytes: [1, 512] });
      t.after(() => link.close());
      const healed = until(() => link.stats.cuts >= 3, 'three cuts').then(() => link.setFaults({ cutProbability: 0 }));
      const threadId = `t-flaky-${seed}`;
      const history = () => f.upstream.history(threadId);
      const logs = [[], [], []];
      const agents = logs.map((log) => new StateSyncHttpAgent({ url: link.url('/agent'), threadId, fetch: recordingFetch(log), stateSync: { backoff: BACKOFF } }));
      await Promise.all(agents.map((agent) => agent.ready));
      const watchers = agents.map((agent) => eventWatcher(agent, history));
      const runs = [agents[0].runAgent({ runId: `run-flaky-${seed}` }, watchers[0].subscriber)];
      await until(() => watchers[0].seen.types.includes('RUN_STARTED'), 'the run to start');
      for (const [i, agent] of agents.slice(1).entries()) runs.push(agent.connectAgent({}, watchers[i + 1].subscriber));
      await Promise.all([...runs, healed]);

      assert.equal(f.upstream.requests.length, 1, 'the upstream ran once');
      const [request] = f.upstream.requests;
      for (const [i, { seen }] of watchers.entries()) {
        assert.deepEqual(seen.errors, [], `client ${i}`);
        assert.deepEqual(seen.violations, [], `client ${i}: synced only on states the upstream held`);
        assert.equal(agents[i].stateSync.status, 'synced', `client ${i}`);
        assert.deepEqual(plain(agents[i].state), f.upstream.state(threadId), `client ${i}: converged`);
      }
      // The starter saw the whole run: one start, one finish, every message's text once.
      assert.equal(count(watchers[0].seen.types, 'RUN_STARTED'), 1);
      assert.equal(count(watchers[0].seen.types, 'RUN_FINISHED'), 1);
      assert.deepEqual(messageTexts(watchers[0].seen.events), messageTexts(request.events), 'the starter: the text, once');
      // Between them the instances started the run once and joined one client per stream they answered.
      const [onA, onB] = await Promise.all([scrapeCli(f.a), scrapeCli(f.b)]);
      const both = (name) => metricSum(onA, name) + metricSum(onB, name);
      assert.equal(both('agui_proxy_runs_started_total'), 1);
      // (A stream joined a client to the run (X-AGUI-Resume: a resume, or an attach to the running run), or
      // an attach found the run over and got the thread's state alone (X-AGUI-Attach: idle).)
      const answered = logs.flat();
      const joined = answered.filter((e) => typeof e.resume === 'string').length;
      const idle = answered.filter((e) => e.attach === 'idle').length;
      assert.equal(both('agui_proxy_resumes_total') + both('agui_proxy_attaches_total{found="run"}'), joined);
      assert.equal(both('agui_proxy_attaches_total{found="idle"}'), idle);
      assert.ok(link.stats.cuts >= 3);
      for (const agent of agents) agent.dispose();
    });
  }
  test('through faulty links, the instance that does not hold the run is killed: every client ends on the holder, text once, state synced', T, async (t) => {
    const hold = gate();
    const { f, agents, watchers, runs, healed, cuts } = await faultyFleet(t, 'killbflaky:', 9, hold.promise);
    const onB = await scrapeCli(f.b);
    assert.ok(metric(onB, 'agui_proxy_attaches_total{found="run"}') >= 1, 'B served clients of the run it did not hold');
    f.b.child.kill('SIGKILL');
    hold.release();
    await Promise.all([...runs, healed]);

    assert.equal(f.upstream.requests.length, 1, 'the upstream ran once');
    const [request] = f.upstream.requests;
    assert.equal(request.completed, true);
    assertFinishedEverywhere(agents, watchers, request, f.upstream.state('t-faulty'));
    assert.ok(cuts() >= 2, 'the links cut streams');
    const onA = await scrapeCli(f.a);
    assert.equal(metric(onA, 'agui_proxy_runs_started_total'), 1, 'A started the upstream run once');
    assert.equal(metric(onA, 'agui_proxy_runs_lost_total'), 0);
    for (const agent of agents) agent.dispose();
  });

  test('through faulty links, the holder is killed: every client gets one RUN_ERROR run-lost and ends on one committed state', T, async (t) => {
    const { f, agents, watchers, runs, healed, cuts } = await faultyFleet(t, 'killaflaky:', 10, new Promise(() => {}));
    f.a.child.kill('SIGKILL');
    await Promise.all([...runs, healed]);

    for (const [i, { seen }] of watchers.entries()) assertRunLost(seen, i);
    await assertOneCommittedState(agents, f.upstream.history('t-faulty'));
    assert.ok(cuts() >= 2, 'the links cut streams');
    const onB = await scrapeCli(f.b);
    assert.equal(metric(onB, 'agui_proxy_runs_started_total'), 0, 'B started no run');
    assert.equal(metric(onB, 'agui_proxy_runs_lost_total'), 1, 'B ended the one lost run');
    for (const agent of agents) agent.dispose();
  });
});

/** Two proxies in this process on one Redis prefix: { a, b } each { proxy, url, store }. */
async function twoProxies(t, prefix, upstream, options = {}) {
  const made = [];
  for (let i = 0; i < 2; i++) {
    const store = redisStore({ url: redis.url, prefix, logger: { warn: () => {}, info: () => {} } });
    const proxy = createStateSyncProxy({ upstream: upstream.url, store, runLeaseMs: LEASE_MS, ...options });
    const server = await serve(proxy);
    made.push({ proxy, store, url: server.url(), server });
  }
  t.after(async () => {
    for (const { proxy, server, store } of made) {
      proxy.close();
      await server.close();
      await store.close();
    }
    await upstream.close();
  });
  return { a: made[0], b: made[1] };
}

describe('run logs in Redis: two proxies in one process', () => {
  test('a run whose clients all moved to the other instance outlives its holder\'s grace period', T, async (t) => {
    const hold = gate();
    const upstream = await startUpstream({ shape: 'docs', script: buildScript({ seed: 2, steps: 6 }), stepMs: 1, initialState: INITIAL, faults: { hold: hold.promise } });
    // B says its clients are there every graceMs / 3, for graceMs: a loaded machine may delay that by a
    // second without A's check missing it. The upstream is released once A's grace period ended twice
    // with its clients at B (A counts that: graceKept), whatever the clock did meanwhile.
    const { a, b } = await twoProxies(t, 'grace:', upstream, { graceMs: 2000 });
    const first = await readStream(a.url, { input: runInput('t-grace', 'run-grace'), stop: (events) => events.some((e) => e.data.type === 'TEXT_MESSAGE_CONTENT') });
    const resumed = readStream(b.url, { method: 'GET', headers: { 'last-event-id': first.events.at(-1).id } });
    await until(() => a.proxy.stats().graceKept >= 2 || a.proxy.stats().aborts.abandoned > 0,
      () => `A's grace period to end twice with the clients at B: A ${JSON.stringify(a.proxy.stats())}, B ${JSON.stringify(b.proxy.stats())}`, 60000);
    hold.release();
    const { events } = await resumed;
    assert.deepEqual(a.proxy.stats().aborts, { client: 0, abandoned: 0 }, 'the holder did not abandon it');
    assert.ok(a.proxy.stats().graceKept >= 2);
    assert.equal(events.at(-1).data.type, 'RUN_FINISHED', 'the run ran to its end');
    assert.equal(upstream.requests[0].completed, true);
  });

  test('an abort asked at the other instance, with the starter\'s credentials, aborts the run; others are refused', T, async (t) => {
    const upstream = await startUpstream({ shape: 'docs', script: buildScript({ seed: 4, steps: 6 }), stepMs: 1, initialState: INITIAL, faults: { hold: new Promise(() => {}) } });
    const { a, b } = await twoProxies(t, 'abort:', upstream);
    const owner = { authorization: 'Bearer owner' };
    const onA = readStream(a.url, { input: runInput('t-abort', 'run-abort'), headers: owner });
    // The run is A's (and the owner authorized for the thread) once the upstream accepted it (SECURITY.md).
    await until(() => a.proxy.stats().runsStarted === 1, 'the run');
    const attached = readStream(b.url, { method: 'GET', headers: { 'x-agui-attach': 't-abort', ...owner } });
    await until(() => b.proxy.stats().attaches.run === 1, 'the attach on B');
    const refused = await fetch(b.url, { method: 'POST', headers: { 'x-agui-abort': 'run-abort', authorization: 'Bearer other' } });
    assert.equal(refused.status, 404);
    const asked = await fetch(b.url, { method: 'POST', headers: { 'x-agui-abort': 'run-abort', ...owner } });
    assert.equal(asked.status, 202);
    const [mine, theirs] = await Promise.all([onA, attached]);
    for (const r of [mine, theirs]) assert.equal(r.events.at(-1).data.code, 'run-aborted');
    assert.equal(a.proxy.stats().aborts.client, 1, 'the holder aborted it');
    await until(() => upstream.requests[0].aborted, 'the upstream request to close');
  });

  test('an abort that lands on an instance serving none of the run\'s clients reaches the holder through the store', T, async (t) => {
    // Held until aborted; released at the end either way, so that a failure here fails rather than hangs the file.
    const hold = gate();
    const upstream = await startUpstream({ shape: 'docs', script: buildScript({ seed: 4, steps: 6 }), stepMs: 1, initialState: INITIAL, faults: { hold: hold.promise } });
    const { a, b } = await twoProxies(t, 'abort-none:', upstream);
    try {
      const owner = { authorization: 'Bearer owner' };
      const onA = readStream(a.url, { input: runInput('t-abort-none', 'run-abort-none'), headers: owner });
      await until(() => a.proxy.stats().runsStarted === 1, 'the run');
      assert.deepEqual(b.proxy.stats().attaches, { run: 0, idle: 0 }, 'B serves no client of the run');
      for (const [runId, headers] of [['run-abort-none', { authorization: 'Bearer other' }], ['no-such-run', owner]]) {
        const refused = await fetch(b.url, { method: 'POST', headers: { 'x-agui-abort': runId, ...headers } });
        assert.equal(refused.status, 404, runId);
      }
      const asked = await fetch(b.url, { method: 'POST', headers: { 'x-agui-abort': 'run-abort-none', ...owner } });
      assert.equal(asked.status, 202);
      assert.equal((await onA).events.at(-1).data.code, 'run-aborted');
      assert.equal(a.proxy.stats().aborts.client, 1, 'the holder aborted it');
      assert.equal(b.proxy.stats().aborts.client, 1, 'B asked for it');
      await until(() => upstream.requests[0].aborted, 'the upstream request to close');
    } finally {
      hold.release();
    }
  });

  test('the stored log is trimmed by count and by bytes, and expires graceMs after the run; a resume from a trimmed id is \'lost\'', T, async (t) => {
    const upstream = await startUpstream({ shape: 'docs', script: buildScript({ seed: 7, steps: 30 }), stepMs: 0, initialState: INITIAL_STATE });
    const { a, b } = await twoProxies(t, 'trim:', upstream, { maxRunEvents: 20, maxRunBufferBytes: 3000, graceMs: 60000 });
    const run = await readStream(a.url, { input: runInput('t-trim', 'run-trim') });
    assert.ok(run.events.length > 40);
    const key = run.events[0].id.split(':')[0];
    const stored = await storedLog('trim:', key);
    const bytes = [...stored.values()].reduce((sum, text) => sum + Buffer.byteLength(text), 0);
    assert.ok(stored.size <= 20 && stored.size > 0, `${stored.size} events kept`);
    assert.ok(bytes <= 3000, `${bytes} bytes kept`);
    assert.equal(Math.max(...stored.keys()), run.events.length, 'the newest events are kept');
    const { createClient } = await import('redis');
    const client = createClient({ url: redis.url });
    await client.connect();
    const ttl = Number(await client.sendCommand(['PTTL', `${runBase('trim:', key)}:log`]));
    await client.close();
    assert.ok(ttl > 0 && ttl <= 60000, `expires ${ttl} ms after the run`);
    const resumed = await readStream(b.url, { method: 'GET', headers: { 'last-event-id': run.events[2].id } });
    assert.equal(resumed.headers.get('x-agui-resume'), 'lost');
    assert.ok(resumed.events.some((e) => e.data.name === 'agui-state-sync.events-lost'));
    assert.equal(resumed.events.at(-1).data.type, 'RUN_FINISHED');
  });

  test('a POST of the same runId at the other instance joins the run instead of starting the agent again', T, async (t) => {
    const hold = gate();
    const upstream = await startUpstream({ shape: 'snapshots', script: buildScript({ seed: 6, steps: 6 }), stepMs: 1, initialState: INITIAL, faults: { hold: hold.promise } });
    const { a, b } = await twoProxies(t, 'retry:', upstream);
    let started = false; // A's RUN_STARTED reached its client: committed, so the run is in the store
    const onA = readStream(a.url, { input: runInput('t-retry', 'run-retry'), onText: (text) => { started = text.includes('RUN_STARTED'); } });
    await until(() => started, 'the run on A');
    const again = readStream(b.url, { input: runInput('t-retry', 'run-retry'), onText: (text) => text.includes('RUN_STARTED') && hold.release() });
    const [mine, theirs] = await Promise.all([onA, again]);
    assert.equal(upstream.requests.length, 1, 'the agent ran once');
    assert.equal(theirs.headers.get('x-agui-resume'), 'exact');
    assert.deepEqual(theirs.events.map((e) => e.id), mine.events.map((e) => e.id), 'the same stream');
    assert.equal(b.proxy.stats().runsStarted, 0);
  });
});
