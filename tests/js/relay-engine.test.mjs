// The proxy's one-module route (js/src/proxy/relay-engine.js): the upstream's
// receiver in the sender's module, each verified state written to the thread's
// emitter with no JSON text of it (UpstreamCursor.writeReceived: by reference
// into a plain emitter, from the core's copy into a store-bound one's local
// emitter). Seeded: the same upstream bytes, cut at random places, go through
// it and through the route it replaced (a StateSync, its applied event handed
// to UpstreamCursor.write as JSON), while another writer moves both threads now
// and then. Every outcome, every write and the emitters' states must agree.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { jsDir, pkg, rng } from './support.mjs';

const { createStateEmitter, createStateSync } = pkg;
const { memoryStore } = await import(join(jsDir, 'src', 'server.js'));
const { UpstreamCursor } = await import(join(jsDir, 'src', 'server', 'upstream-cursor.js'));
const { RelayEngine } = await import(join(jsDir, 'src', 'proxy', 'relay-engine.js'));

const BEGUN = 0; // CursorFacade::writeReceived's modes
const FIRST_STATE = 1;

// A seeded upstream: sequenced state events under /a (now and then a delta that
// does not apply, or two swapped so that one is held), text events, an
// activity, and a line that is not JSON.
function upstreamBytes(random, count) {
  const events = [];
  let seq = 0;
  for (let i = 0; i < count; i++) {
    const key = `/a/k${Math.floor(random() * 5)}`;
    const roll = random();
    if (roll < 0.15 || seq === 0) events.push({ type: 'STATE_SNAPSHOT', seq: ++seq, snapshot: { a: { k0: i }, pad: 'p'.repeat(200) } });
    else if (roll < 0.2) events.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'hi' });
    else if (roll < 0.25) events.push({ type: 'ACTIVITY_SNAPSHOT', messageId: 'act', activityType: 'plan', content: { step: i } });
    else if (roll < 0.27) events.push('{not json');
    else {
      const op = roll < 0.35 ? { op: 'remove', path: key } : { op: 'add', path: key, value: i };
      events.push({ type: 'STATE_DELTA', seq: seq + 1, base_seq: seq, delta: [op] });
      seq++;
    }
    const n = events.length;
    if (n >= 2 && random() < 0.1 && events[n - 2].seq !== undefined) [events[n - 1], events[n - 2]] = [events[n - 2], events[n - 1]];
  }
  const text = events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');
  return new TextEncoder().encode(text);
}

function* chunks(random, bytes) {
  for (let at = 0; at < bytes.length;) {
    const n = 1 + Math.floor(random() * 400);
    yield bytes.subarray(at, at + n);
    at += n;
  }
}

const summary = (written) => ({ events: written.events, dropped: written.dropped, code: written.error?.code ?? null });
// What a relay acts on in an outcome (the JSON route's also carry the event, its state and changed paths).
const seen = ({ kind, type, seq, reason, code, messageId }) => ({ kind, type, seq, reason, code, messageId });

// Both routes over one seeded upstream; `durable`: the threads' emitters are
// store-bound (memoryStore()), whose writes are promises, and the cursors always
// rebase, as the proxy's are for such a thread.
async function bothRoutes(seed, durable) {
  const random = rng(seed);
  const initialState = { a: {}, o: {} };
  const emitter = () => createStateEmitter(durable ? { store: memoryStore(), key: 'k', epoch: 'e', initialState } : { epoch: 'e', initialState });
  const emitters = [await emitter(), await emitter()];
  const cursors = [await UpstreamCursor.create({ alwaysRebase: durable }), await UpstreamCursor.create({ alwaysRebase: durable })];
  cursors.forEach((cursor, i) => cursor.begin(initialState, false, emitters[i].seq));
  const sync = await createStateSync({ initialState, activities: true });
  const relay = await RelayEngine.create({ initialState, activities: true });
  let applied = 0;
  for (const chunk of chunks(random, upstreamBytes(random, 80))) {
    if (random() < 0.15) { // another writer, on both threads
      const ops = [{ op: 'add', path: `/o/w${Math.floor(random() * 3)}`, value: 1 }];
      const write = async (e) => { // (refused once an upstream snapshot dropped /o)
        try {
          return await e.patch(ops);
        } catch (error) {
          return error.code;
        }
      };
      assert.deepEqual(await write(emitters[0]), await write(emitters[1]));
    }
    const old = [];
    for (const o of sync.feed(chunk)) {
      const write = o.kind === 'applied' && o.messageId === undefined ? summary(await cursors[0].write(emitters[0], o.event)) : null;
      old.push({ ...seen(o), write });
    }
    const now = [];
    for (const o of relay.feed(chunk)) { // (the next step is taken once this write settled)
      if (o.received) assert.equal(o.event, undefined, 'a state crosses by reference only');
      const write = o.received ? summary(await cursors[1].writeReceived(emitters[1], o.received, o.ref, BEGUN)) : null;
      now.push({ ...seen(o), write });
    }
    assert.deepEqual(now, old, `seed ${seed}`);
    assert.deepEqual(emitters[1].state, emitters[0].state, `seed ${seed}`);
    assert.equal(emitters[1].seq, emitters[0].seq);
    applied += old.filter((o) => o.write !== null).length;
  }
  assert.deepEqual(relay.end().map(seen), sync.end().map(seen));
  for (const x of [...emitters, ...cursors, sync, relay]) x.dispose();
  return applied;
}

test('a RelayEngine writes what a StateSync\'s applied events through UpstreamCursor.write write (seeded)', async () => {
  let applied = 0;
  for (let seed = 1; seed <= 25; seed++) applied += await bothRoutes(seed, false);
  assert.ok(applied > 500, `${applied} states written`);
});

test('the same through store-bound emitters: the received state\'s plan, tried on the local emitter (seeded)', async () => {
  let applied = 0;
  for (let seed = 1; seed <= 12; seed++) applied += await bothRoutes(seed, true);
  assert.ok(applied > 250, `${applied} states written`);
});

test('a step that applies several states: whole-state writes take its last one, once; activity content is the last one\'s', async () => {
  const relay = await RelayEngine.create({ initialState: {}, activities: true });
  const emitter = await createStateEmitter({ epoch: 'e' });
  const cursor = await UpstreamCursor.create();
  const frame = (e) => `data: ${JSON.stringify(e)}\n\n`;
  const delta = (seq, key) => ({ type: 'STATE_DELTA', seq, base_seq: seq - 1, delta: [{ op: 'add', path: `/${key}`, value: seq }] });
  const feed = (events) => [...relay.feed(new TextEncoder().encode(events.map(frame).join('')))];
  assert.equal(feed([{ type: 'STATE_SNAPSHOT', seq: 1, snapshot: { a: 1 } }, delta(3, 'c')]).length, 2); // 3 is held
  const iterator = relay.feed(new TextEncoder().encode(frame(delta(2, 'b'))));
  const step = [iterator.next().value, iterator.next().value];
  assert.deepEqual(step.map((o) => [o.type, o.last]), [['STATE_DELTA', false], ['STATE_DELTA', true]]);
  assert.equal(cursor.writeReceived(emitter, relay, step[0].ref, FIRST_STATE).later, true);
  assert.equal(emitter.seq, 0, 'nothing written for the earlier state');
  assert.equal(cursor.writeReceived(emitter, relay, step[1].ref, FIRST_STATE).dropped, null);
  assert.deepEqual(emitter.state, { a: 1, b: 2, c: 3 });
  assert.equal(iterator.next().done, true);
  // An activity: its content is read while the engine holds it.
  const [activity] = feed([{ type: 'ACTIVITY_SNAPSHOT', messageId: 'x', activityType: 'plan', content: { n: 1 } }]);
  assert.deepEqual(activity.content, { n: 1 });
  for (const x of [relay, emitter, cursor]) x.dispose();
});

test('bad input through a RelayEngine: clear outcomes, nothing written; a ref from a finished step is refused', async () => {
  const relay = await RelayEngine.create({ initialState: { a: 1 }, maxEventBytes: 256 });
  const emitter = await createStateEmitter({ epoch: 'e', initialState: { a: 1 } });
  const cursor = await UpstreamCursor.create();
  cursor.begin({ a: 1 }, false, emitter.seq);
  const bytes = (text) => new TextEncoder().encode(text);
  const kinds = [...relay.feed(bytes(`data: {"type":"STATE_DELTA","delta":[{"op":"bogus"}]}\n\ndata: ${'x'.repeat(300)}\n\ndata: [1\n\n`))];
  assert.ok(kinds.some((o) => o.kind === 'resync'), 'a delta that cannot apply asks for a resync');
  assert.ok(kinds.filter((o) => o.kind === 'error').length >= 2, 'an oversized and a malformed event are errors');
  assert.ok(kinds.every((o) => o.kind !== 'applied'));
  const [snapshot] = [...relay.feed(bytes('data: {"type":"STATE_SNAPSHOT","snapshot":{"a":2}}\n\n'))];
  [...relay.feed(bytes('data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'))];
  const stale = cursor.writeReceived(emitter, relay, snapshot.ref, BEGUN);
  assert.equal(stale.dropped, 'invalid-event');
  assert.deepEqual([emitter.seq, emitter.state], [0, { a: 1 }]);
  relay.dispose();
  assert.throws(() => [...relay.feed(bytes('data: {}\n\n'))], { code: 'disposed' });
  emitter.dispose();
  cursor.dispose();
});
