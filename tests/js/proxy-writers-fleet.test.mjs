// Issue 40, item 2, through the proxy: writers of one thread each in front of
// a STATEFUL snapshot-only upstream (it keeps its own view of each thread
// between runs and ignores RunAgentInput.state after its first run), so each
// snapshot it sends is stale about the other writers' fields. Two
// agui-state-sync-proxy CLIs on one redis-server: writer A (through proxy A)
// owns a/aList, writer B (through proxy B) owns b/bList; one run per snapshot,
// a seeded schedule interleaving them on several threads at once. A third
// writer kind, a store-bound sequenceState() in this process on the same
// store, owns c/cList in the second group of cases: its client sends its state
// as the proxies' clients do, and a store-bound sequenceState() never writes it
// (UpstreamCursor::writesInput): its agent's first snapshot goes on only by
// what it changed from that state.
//
// The proxy keeps the upstream's last view of each thread in memory of its
// instance (thread.upstreamView, js/src/proxy/run-cursor.js; the core's
// UpstreamCursor::addStart), so each writer's runs go through its own proxy.
//
// Whatever the schedule and whatever state the clients send
// (CLIENT_STATE none / last / initial): every thread ends with every write
// of every writer, in order; the stored log has consecutive seqs on one epoch
// and no committed write takes a field back; no two clients saw different
// deltas at one seq.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { AbstractAgent } from '@ag-ui/client';
import { Observable } from 'rxjs';
import { until } from '../support/until.mjs';
import { applyDelta, jsDir, pkg, rng } from './support.mjs';
import { startProxyCli } from './proxy-support.mjs';
import { RedisServer } from './redis-support.mjs';

const { redisStore } = await import(join(jsDir, 'src', 'server.js'));
const { sequenceState } = await import(join(jsDir, 'src', 'ag-ui.js'));
const { createStateEmitter } = pkg;

const T = { timeout: 30000 };
const N = 10; // snapshots (runs) per writer per thread
const THREADS = 5;
const SEEDS = [1, 2];
const CLIENT_STATES = ['none', 'last', 'initial'];
const WAIT_MS = 10000; // a deadline for one event, never a pass

const expected = (n) => Array.from({ length: n }, (_, i) => i + 1);

/** The initial state of a thread written by `fields`. */
function initialOf(fields) {
  return Object.fromEntries(fields.flatMap((f) => [[f, 0], [`${f}List`, []]]));
}

/** One more write of `field` to a stateful upstream's own view: n, appended to its list. */
function advance(view, field, n) {
  view[field] = n;
  view[`${field}List`].push(n);
  return structuredClone(view);
}

/**
 * A stateful snapshot-only upstream over HTTP (behind a proxy): the first run
 * of a thread takes its view from RunAgentInput.state (else `initial`), later
 * runs keep that view. Each run is held open; next(thread, n) sends one
 * snapshot, finish(thread) ends the run.
 */
function httpUpstream(field, initial) {
  const views = new Map();
  const open = new Map();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      const input = JSON.parse(body);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId })}\n\n`);
      if (!views.has(input.threadId)) views.set(input.threadId, structuredClone(input.state ?? initial));
      open.set(input.threadId, { res, input });
    });
  });
  return {
    listen: () => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}/agent`))),
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
    opened: (t) => open.has(t),
    next(t, n) {
      const snapshot = advance(views.get(t), field, n);
      open.get(t).res.write(`data: ${JSON.stringify({ type: 'STATE_SNAPSHOT', snapshot })}\n\n`);
    },
    finish(t) {
      const { res, input } = open.get(t);
      open.delete(t);
      res.end(`data: ${JSON.stringify({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId })}\n\n`);
    },
  };
}

/** The same stateful upstream as an in-process AG-UI agent (behind sequenceState()). */
class StatefulAgent extends AbstractAgent {
  #views = new Map();
  #open = new Map();
  #field;
  #initial;

  constructor(field, initial) {
    super({});
    this.#field = field;
    this.#initial = initial;
  }

  run(input) {
    return new Observable((subscriber) => {
      if (!this.#views.has(input.threadId)) this.#views.set(input.threadId, structuredClone(input.state ?? this.#initial));
      this.#open.set(input.threadId, { subscriber, input });
      subscriber.next({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
    });
  }

  opened(t) {
    return this.#open.has(t);
  }

  next(t, n) {
    this.#open.get(t).subscriber.next({ type: 'STATE_SNAPSHOT', snapshot: advance(this.#views.get(t), this.#field, n) });
  }

  finish(t) {
    const { subscriber, input } = this.#open.get(t);
    this.#open.delete(t);
    subscriber.next({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
    subscriber.complete();
  }
}

/** Applies one state event to a client's copy (the repo's own applyDelta). */
function applyState(state, event) {
  if (event.type === 'STATE_SNAPSHOT') return structuredClone(event.snapshot);
  if (event.type === 'STATE_DELTA') return applyDelta(state, event.delta);
  return state;
}

/** A client's run through a proxy: POSTs it, reads its SSE, keeps its events and its copy of the state. */
function httpClient(url, input) {
  const c = { runId: input.runId, events: [], state: undefined, finished: false };
  c.done = (async () => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(input) });
    assert.equal(res.status, 200, `${input.threadId} ${input.runId}: status`);
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body) {
      buffer += decoder.decode(chunk, { stream: true });
      let i;
      while ((i = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        const data = frame.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
        if (!data) continue;
        const event = JSON.parse(data);
        c.events.push(event);
        c.state = applyState(c.state, event);
      }
    }
    c.finished = true;
  })();
  return c;
}

/** A client's run through a sequenceState() middleware in this process. */
function middlewareClient(middleware, agent, input) {
  const c = { runId: input.runId, events: [], state: undefined, finished: false };
  c.done = new Promise((resolve, reject) => {
    middleware.run(input, agent).subscribe({
      next: (event) => {
        c.events.push(event);
        c.state = applyState(c.state, event);
      },
      error: reject,
      complete: () => { c.finished = true; resolve(); },
    });
  });
  return c;
}

const seqOf = (event) => event.metadata?.['agui-state-sync']?.seq;
const epochOf = (event) => event.metadata?.['agui-state-sync']?.epoch;

/**
 * What every thread must hold, checked on what its clients saw (every
 * committed event reaches at least the client of the run that wrote it) and on
 * the store's log; returns the thread's final state.
 */
async function checkThread(store, t, fields, clients) {
  const stored = await store.load(t);
  assert.ok(stored && stored.events.length > 0, `${t}: nothing stored`);
  // What the clients saw, by seq: one delta per seq whoever saw it (no fork), its snapshots.
  const bySeq = new Map();
  for (const c of clients) {
    for (const event of c.events) {
      if (event.type !== 'STATE_DELTA' && event.type !== 'STATE_SNAPSHOT') continue;
      const seq = seqOf(event);
      assert.ok(Number.isSafeInteger(seq), `${t}: a state event without a seq`);
      assert.equal(epochOf(event), stored.epoch, `${t}: run ${c.runId} saw seq ${seq} on another epoch`);
      const entry = bySeq.get(seq) ?? { delta: undefined, snapshot: undefined, runs: [] };
      bySeq.set(seq, entry);
      entry.runs.push(c.runId);
      if (event.type === 'STATE_SNAPSHOT') {
        if (entry.snapshot !== undefined) assert.deepEqual(event.snapshot, entry.snapshot, `${t}: two snapshots at seq ${seq}`);
        entry.snapshot = event.snapshot;
      } else {
        const text = JSON.stringify(event.delta);
        if (entry.delta !== undefined) assert.equal(text, entry.delta, `${t}: two clients saw different deltas at seq ${seq} (a fork)`);
        entry.delta = text;
      }
    }
  }
  // The committed history replayed: consecutive seqs from the first snapshot, no write takes a field back.
  const seqs = [...bySeq.keys()].sort((x, y) => x - y);
  const states = new Map();
  let state;
  for (const [i, seq] of seqs.entries()) {
    const { delta, snapshot, runs } = bySeq.get(seq);
    if (i === 0) {
      assert.ok(snapshot !== undefined, `${t}: the first seq seen (${seq}) is not a snapshot`);
      state = structuredClone(snapshot);
      states.set(seq, state);
      continue;
    }
    assert.equal(seq, seqs[i - 1] + 1, `${t}: no client saw seq ${seqs[i - 1] + 1}`);
    const before = state;
    state = delta !== undefined ? applyDelta(state, JSON.parse(delta)) : structuredClone(snapshot);
    if (delta !== undefined && snapshot !== undefined) assert.deepEqual(snapshot, state, `${t}: the snapshot at seq ${seq} is not the state its delta made`);
    states.set(seq, state);
    for (const f of fields) {
      const [was, now] = [before[f] ?? 0, state[f] ?? 0];
      const [wasList, nowList] = [before[`${f}List`] ?? [], state[`${f}List`] ?? []];
      const what = `${t}: seq ${seq} (seen by ${runs.join(', ')}) took ${f} back`;
      assert.ok(now >= was, `${what} (${was} -> ${now})`);
      assert.deepEqual(nowList.slice(0, wasList.length), wasList, what);
    }
  }
  // The stored log: consecutive seqs on the thread's epoch, ending at its seq, each event the one committed at its seq.
  const log = stored.events.map((text) => JSON.parse(text));
  log.forEach((event, i) => {
    const seq = seqOf(event);
    assert.equal(epochOf(event), stored.epoch, `${t}: stored seq ${seq} on another epoch`);
    if (i > 0) assert.equal(seq, seqOf(log[i - 1]) + 1, `${t}: the stored seqs are not consecutive`);
    assert.ok(states.has(seq), `${t}: stored seq ${seq} was seen by no client`);
    if (event.type === 'STATE_SNAPSHOT') assert.deepEqual(event.snapshot, states.get(seq), `${t}: the stored snapshot at seq ${seq}`);
    else assert.equal(JSON.stringify(event.delta), bySeq.get(seq).delta, `${t}: the stored delta at seq ${seq}`);
  });
  assert.equal(seqOf(log.at(-1)), stored.seq, `${t}: the log ends at the thread's seq`);
  assert.equal(seqs.at(-1), stored.seq, `${t}: the last seq a client saw is the thread's`);
  // The thread as committed, read by a fresh emitter on the store.
  const emitter = await createStateEmitter({ store, key: t });
  await emitter.refresh();
  const final = structuredClone(emitter.state);
  emitter.dispose();
  assert.deepEqual(final, state, `${t}: the history replayed is the thread's state`);
  return final;
}

/**
 * One case: `writers` ({ name, field, kind: 'proxy' | 'middleware', ... }) each
 * writing N snapshots, one run per snapshot, on THREADS threads at once; the
 * order of writers on each thread drawn from `seed`.
 */
async function runCase({ store, writers, clientState, seed, tag }) {
  const fields = writers.map((w) => w.field);
  const initial = initialOf(fields);
  const random = rng(seed);
  // One schedule per thread, drawn up front (deterministic whatever the timing).
  const schedules = Array.from({ length: THREADS }, () => {
    const left = Object.fromEntries(fields.map((f) => [f, N]));
    const order = [];
    for (;;) {
      const open = fields.filter((f) => left[f] > 0);
      if (open.length === 0) return order;
      const f = open[Math.floor(random() * open.length)];
      left[f]--;
      order.push(f);
    }
  });
  await Promise.all(schedules.map(async (order, ti) => {
    const t = `${tag}-s${seed}-${clientState}-${ti}`;
    const clients = [];
    const last = {};
    const open = {}; // each writer's run on the thread that is open now
    const begin = async (w, n) => {
      const input = {
        threadId: t, runId: `${w.field}${n}`, messages: [], tools: [], context: [],
        forwardedProps: { stateSync: { lastSeq: null, epoch: null } },
      };
      // 'none': a client that sends its state on its first run only (a stateful upstream that first meets
      // a thread already written and is sent no state starts from its own empty view, which the proxy cannot know).
      const state = clientState === 'none' ? (n === 1 ? initial : undefined)
          : clientState === 'last' ? (last[w.field] ?? initial) : initial;
      if (state !== undefined) input.state = state;
      const c = w.kind === 'proxy' ? httpClient(w.url, input) : middlewareClient(w.middleware, w.upstream, input);
      clients.push(c);
      await until(() => w.upstream.opened(t) || c.finished, `${t}: run ${input.runId} reaching its upstream`, WAIT_MS);
      assert.ok(!c.finished, `${t}: run ${input.runId} ended before its upstream ran: ${JSON.stringify(c.events)}`);
      open[w.field] = c;
    };
    const end = async (w) => {
      const c = open[w.field];
      delete open[w.field];
      w.upstream.finish(t);
      await c.done;
      last[w.field] = c.state;
    };
    // sequenceState()'s writer opens its one run before anyone writes: its agent's view is stale about
    // every write of the proxies' writers.
    for (const w of writers) if (w.kind === 'middleware') await begin(w, 1);
    const count = Object.fromEntries(fields.map((f) => [f, 0]));
    for (const field of order) {
      const w = writers.find((x) => x.field === field);
      const n = ++count[field];
      if (!open[field]) await begin(w, n);
      const c = open[field];
      w.upstream.next(t, n);
      await until(() => c.state?.[field] === n || c.finished, () => `${t}: ${field}=${n} reaching its client (state ${JSON.stringify(c.state)})`, WAIT_MS);
      assert.equal(c.state?.[field], n, `${t}: ${field}=${n} never reached its client: ${JSON.stringify(c.events)}`);
      // A proxy writer's run ends after each snapshot (its next run goes through the same proxy);
      // sequenceState() keeps no upstream view between runs: its writer's one run spans the schedule.
      if (w.kind === 'proxy' || n === N) await end(w);
    }
    const final = await checkThread(store, t, fields, clients);
    const want = Object.fromEntries(fields.flatMap((f) => [[f, N], [`${f}List`, expected(N)]]));
    assert.deepEqual(final, want, `${t}: every write of every writer, in order`);
  }));
}

describe('stateful snapshot-only upstreams behind two proxies with --redis, on the same threads (issue 40)', () => {
  let redis;
  let store;
  let middleware;
  let middlewareStore;
  const upstreams = [];
  const proxies = [];
  const writers = {};

  before(async () => {
    redis = await RedisServer.start();
    store = redisStore({ url: redis.url });
    for (const field of ['a', 'b']) {
      const upstream = httpUpstream(field, initialOf(['a', 'b']));
      upstreams.push(upstream);
      const proxy = await startProxyCli(['--upstream', await upstream.listen(), '--port', '0', '--redis', redis.url]);
      proxies.push(proxy);
      writers[field] = { field, kind: 'proxy', url: proxy.url, upstream };
    }
    middlewareStore = redisStore({ url: redis.url }); // another instance's client of the same redis
    middleware = sequenceState({ store: middlewareStore });
    writers.c = { field: 'c', kind: 'middleware', middleware, upstream: new StatefulAgent('c', initialOf(['a', 'b', 'c'])) };
  });

  after(async () => {
    middleware?.dispose();
    for (const proxy of proxies) await proxy.stop();
    for (const upstream of upstreams) await upstream.close();
    await store?.close();
    await middlewareStore?.close();
    await redis?.close();
  });

  for (const seed of SEEDS) {
    for (const clientState of CLIENT_STATES) {
      test(`A and B through their proxies, seed ${seed}, client state ${clientState}: no write lost, none taken back, no fork`, T, async () => {
        await runCase({ store, writers: [writers.a, writers.b], clientState, seed, tag: 'AB' });
      });
    }
  }

  for (const seed of SEEDS) {
    for (const clientState of ['none', 'last']) {
      test(`A and B through their proxies and C through a store-bound sequenceState(), seed ${seed}, client state ${clientState}`, T, async () => {
        await runCase({ store, writers: [writers.a, writers.b, writers.c], clientState, seed, tag: 'ABC' });
      });
    }
  }
});

/**
 * A writer through a store-bound emitter of its own, update(view, { rebase: true }): its view is
 * stale about the other writers' fields; it returns the events of each write (a client's copy of them).
 */
function rebasingWriter(store, field, initial) {
  const views = new Map();
  return {
    field,
    /** Opens thread `t` and writes its initial state (the writer's view starts there). */
    async open(t, clients) {
      const emitter = await createStateEmitter({ store, key: t });
      views.set(t, { emitter, view: structuredClone(initial) });
      clients.push({ runId: `${field}0`, events: await emitter.update(structuredClone(initial)) });
    },
    async write(t, n, clients) {
      const w = views.get(t);
      const c = { runId: `${field}${n}`, events: await w.emitter.update(advance(w.view, field, n), { rebase: true }) };
      clients.push(c);
    },
    dispose: () => { for (const { emitter } of views.values()) emitter.dispose(); },
  };
}

describe('one stateful upstream behind two proxies with --redis, its runs alternating between them (issue 40)', () => {
  // The upstream keeps its own view of each thread; its next run goes through the other instance,
  // which never saw its last state: only the store has it (thread.js syncUpstreamView). A second
  // writer, a rebasing emitter of this process, commits b between its runs.
  let redis;
  let store;
  let upstream;
  const proxies = [];

  before(async () => {
    redis = await RedisServer.start();
    store = redisStore({ url: redis.url });
    upstream = httpUpstream('a', initialOf(['a', 'b']));
    const url = await upstream.listen();
    for (let i = 0; i < 2; i++) proxies.push(await startProxyCli(['--upstream', url, '--port', '0', '--redis', redis.url]));
  });

  after(async () => {
    for (const proxy of proxies) await proxy.stop();
    await upstream?.close();
    await store?.close();
    await redis?.close();
  });

  for (const seed of SEEDS) {
    test(`seed ${seed}: the other instance starts the upstream's run from its stored last state, so b stands`, T, async () => {
      const initial = initialOf(['a', 'b']);
      const writer = rebasingWriter(store, 'b', initial);
      const random = rng(seed);
      try {
        await Promise.all(Array.from({ length: THREADS }, async (_, ti) => {
          const t = `ALT-s${seed}-${ti}`;
          const clients = [];
          const count = { a: 0, b: 0 };
          await writer.open(t, clients);
          while (count.a < N || count.b < N) {
            const field = count.a === N ? 'b' : count.b === N ? 'a' : (random() < 0.5 ? 'a' : 'b');
            const n = ++count[field];
            if (field === 'b') {
              await writer.write(t, n, clients);
              continue;
            }
            // The client sends its state on its first run only: the proxy's only start is the upstream's own.
            const input = { threadId: t, runId: `a${n}`, messages: [], tools: [], context: [], forwardedProps: { stateSync: { lastSeq: null, epoch: null } } };
            if (n === 1) input.state = initial;
            const c = httpClient(proxies[n % 2].url, input);
            clients.push(c);
            await until(() => upstream.opened(t) || c.finished, `${t}: run a${n} reaching its upstream`, WAIT_MS);
            upstream.next(t, n);
            await until(() => c.state?.a === n || c.finished, () => `${t}: a=${n} reaching its client`, WAIT_MS);
            upstream.finish(t);
            await c.done;
          }
          const final = await checkThread(store, t, ['a', 'b'], clients);
          assert.deepEqual(final, { a: N, aList: expected(N), b: N, bList: expected(N) }, `${t}: every write of both writers`);
        }));
      } finally {
        writer.dispose();
      }
    });
  }
});
