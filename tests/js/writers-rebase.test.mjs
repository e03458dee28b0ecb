// Two writers on one thread, each through its own sequenceState() on one store
// (two instances), each sending whole-state snapshots of its own view (issue
// 40): writer A owns `a` and `aList`, writer B owns `b` and `bList`, and each
// view is stale about the other's fields. Seeded schedules interleave their
// snapshots, one at a time or both at once (racing in the store). Whatever the
// schedule: no committed change is lost (the thread ends with every value of
// both writers), no stale view takes the other's field back at any seq, and
// the seq never forks (one committed event per seq, in order).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AbstractAgent } from '@ag-ui/client';
import { Observable } from 'rxjs';
import { jsDir } from './support.mjs';
import { storeKinds } from './store-support.mjs';

const { sequenceState } = await import(join(jsDir, 'src', 'ag-ui.js'));
const T = { timeout: 60000 };
const STEPS = 12; // snapshots per writer per schedule
const SEEDS = [1, 2, 3, 4, 5, 6];

function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x / 2 ** 32;
  };
}

/** An agent whose snapshots the test releases one by one: next() sends its view after one more change of its own. */
class Writer extends AbstractAgent {
  #subscriber = null;
  #view;
  #field;
  #n = 0;

  constructor(field, initial) {
    super({});
    this.#field = field;
    this.#view = structuredClone(initial);
  }

  run(input) {
    return new Observable((subscriber) => {
      this.#subscriber = subscriber;
      subscriber.next({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
    });
  }

  next() {
    this.#n++;
    this.#view[this.#field] = this.#n;
    this.#view[`${this.#field}List`].push(this.#n);
    this.#subscriber.next({ type: 'STATE_SNAPSHOT', snapshot: structuredClone(this.#view) });
  }

  finish(input) {
    this.#subscriber.next({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
    this.#subscriber.complete();
  }
}

/** One writer's run through its middleware: its events as they come, and a wait for the next state event. */
function start(middleware, agent, input) {
  const events = [];
  let wake = null;
  const done = new Promise((resolve, reject) => {
    middleware.run(input, agent).subscribe({
      next: (event) => {
        events.push(event);
        wake?.();
      },
      error: reject,
      complete: resolve,
    });
  });
  const stateEvents = () => events.filter((e) => e.type.startsWith('STATE_')).length;
  const waitFor = (count) => new Promise((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`no state event ${count} within 10 s`)), 10000);
    const check = () => {
      if (stateEvents() < count) return;
      clearTimeout(deadline);
      wake = null;
      resolve();
    };
    wake = check;
    check();
  });
  return { events, done, stateEvents, waitFor };
}

const initial = { a: 0, aList: [], b: 0, bList: [] };
const input = (runId) => ({ threadId: 'W', runId, messages: [], tools: [], context: [], state: initial, forwardedProps: { stateSync: { lastSeq: null, epoch: null } } });

for (const kind of storeKinds()) {
  describe(`two snapshot writers through sequenceState() on ${kind.name}`, () => {
    before(() => kind.setup());
    after(() => kind.teardown());

    for (const seed of SEEDS) {
      test(`seed ${seed}: no committed change is lost, no stale view takes a field back, the seq never forks`, T, async () => {
        const random = rng(seed);
        const threadId = `W-${kind.name}-${seed}`;
        const [ma, mb] = [sequenceState({ store: kind.open() }), sequenceState({ store: kind.open() })];
        const [wa, wb] = [new Writer('a', initial), new Writer('b', initial)];
        const ia = { ...input('ra'), threadId };
        const ib = { ...input('rb'), threadId };
        const ra = start(ma, wa, ia);
        await ra.waitFor(1); // A's run put the thread at its input state
        const rb = start(mb, wb, ib);
        await rb.waitFor(1);
        let [na, nb] = [0, 0];
        while (na < STEPS || nb < STEPS) {
          const roll = random();
          const both = roll < 0.3 && na < STEPS && nb < STEPS;
          const pickA = both || (nb >= STEPS) || (na < STEPS && roll < 0.65);
          const waits = [];
          if (pickA) {
            wa.next();
            na++;
            waits.push(ra.waitFor(1 + na));
          }
          if (both || !pickA) {
            wb.next();
            nb++;
            waits.push(rb.waitFor(1 + nb));
          }
          await Promise.all(waits); // both at once: their commits race in the store
        }
        wa.finish(ia);
        wb.finish(ib);
        await Promise.all([ra.done, rb.done]);
        // The thread as committed: every value of both writers (read from the store, past both runs).
        const emitter = mb.emitterFor(threadId);
        await emitter.refresh();
        const final = emitter.state;
        const expected = (n) => Array.from({ length: n }, (_, i) => i + 1);
        assert.deepEqual(final, { a: STEPS, aList: expected(STEPS), b: STEPS, bList: expected(STEPS) }, `seed ${seed}: the thread holds every write`);
        // Every committed event, from both runs, in seq order: one per seq, and no field ever goes back.
        const committed = new Map();
        for (const event of [...ra.events, ...rb.events]) {
          if (!event.type.startsWith('STATE_')) continue;
          const seq = event.metadata['agui-state-sync'].seq;
          const text = JSON.stringify(event.type === 'STATE_DELTA' ? event.delta : event.snapshot);
          if (committed.has(seq)) assert.equal(committed.get(seq).text, text, `seq ${seq} was committed twice with different content (a fork)`);
          committed.set(seq, { event, text });
        }
        for (const { event } of committed.values()) {
          if (event.type !== 'STATE_DELTA') continue;
          for (const op of event.delta) {
            // A stale view would write the other writer's field back ("replace /b 3" by A).
            const owner = ra.events.includes(event) ? 'a' : 'b';
            const other = owner === 'a' ? 'b' : 'a';
            assert.ok(!op.path.startsWith(`/${other}`), `seq ${event.metadata['agui-state-sync'].seq}: writer ${owner} wrote ${op.path}: ${JSON.stringify(op)}`);
          }
        }
        for (const m of [ma, mb]) m.dispose();
      });
    }
  });
}

// The same two writers as emitters (createStateEmitter({ store, key })) calling update(view, { rebase: true })
// with their stale views, one at a time or racing; plain update() stays last-writer-wins, as documented.
const { createStateEmitter } = await import(join(jsDir, 'src', 'index.js'));

for (const kind of storeKinds()) {
  describe(`two rebasing emitters on ${kind.name}`, () => {
    before(() => kind.setup());
    after(() => kind.teardown());

    for (const seed of SEEDS) {
      test(`seed ${seed}: update(view, { rebase: true }) loses no other writer's change`, T, async () => {
        const random = rng(seed);
        const key = `E-${kind.name}-${seed}`;
        const a = await createStateEmitter({ store: kind.open(), key, initialState: initial });
        const b = await createStateEmitter({ store: kind.open(), key, initialState: initial });
        const views = { a: structuredClone(initial), b: structuredClone(initial) };
        const step = (emitter, field) => {
          const view = views[field];
          view[field] += 1;
          view[`${field}List`].push(view[field]);
          return emitter.update(structuredClone(view), { rebase: true });
        };
        for (let i = 0; i < STEPS; i++) {
          if (random() < 0.4) await Promise.all([step(a, 'a'), step(b, 'b')]); // racing in the store
          else if (random() < 0.5) await step(a, 'a').then(() => step(b, 'b'));
          else await step(b, 'b').then(() => step(a, 'a'));
        }
        await a.refresh();
        const expected = Array.from({ length: STEPS }, (_, i) => i + 1);
        assert.deepEqual(a.state, { a: STEPS, aList: expected, b: STEPS, bList: expected });
        a.dispose();
        b.dispose();
      });
    }

    test('plain update() is last-writer-wins: a stale view takes the other writer\'s field back', T, async () => {
      const key = `E-${kind.name}-plain`;
      const a = await createStateEmitter({ store: kind.open(), key, initialState: initial });
      const b = await createStateEmitter({ store: kind.open(), key, initialState: initial });
      await a.update({ ...initial, a: 1 });
      await b.update({ ...initial, b: 1 }); // b never saw a's write: its whole state wins
      await a.refresh();
      assert.equal(a.state.a, 0);
      a.dispose();
      b.dispose();
    });
  });
}

// Rebasing costs no bytes where nobody else wrote: a snapshot-only agent growing a list reaches its
// client through a store-bound sequenceState() as exactly the deltas it gets through a thread in
// memory (the in-step try, checked on the store's line at each attempt), never the whole list again.
class Growing extends AbstractAgent {
  run(input) {
    return new Observable((s) => {
      s.next({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
      const items = [];
      for (let i = 1; i <= 40; i++) {
        items.push({ n: i, label: `item ${i}`, note: 'x'.repeat(40) });
        s.next({ type: 'STATE_SNAPSHOT', snapshot: { items: [...items], total: i } });
      }
      s.next({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
      s.complete();
    });
  }
}

async function stateEventsOf(middleware, threadId) {
  const out = [];
  const run = { threadId, runId: 'g', messages: [], tools: [], context: [], state: {}, forwardedProps: {} };
  await new Promise((resolve, reject) => middleware.run(run, new Growing({})).subscribe({
    next: (e) => { if (e.type.startsWith('STATE_')) out.push(e.type === 'STATE_DELTA' ? e.delta : e.snapshot); },
    error: reject, complete: resolve,
  }));
  middleware.dispose();
  return out;
}

for (const kind of storeKinds()) {
  describe(`a snapshot-only agent through sequenceState() on ${kind.name}`, () => {
    before(() => kind.setup());
    after(() => kind.teardown());
    test('the client gets the same deltas as through a thread in memory', T, async () => {
      const inMemory = await stateEventsOf(sequenceState(), 'G-mem');
      const stored = await stateEventsOf(sequenceState({ store: kind.open() }), `G-${kind.name}`);
      assert.deepEqual(stored, inMemory);
      assert.ok(stored.slice(2).every((ops) => Array.isArray(ops) && ops.every((op) => op.path !== '/items')), 'never the whole list');
    });
  });
}
