// createStateEmitter: the sender through its own WASM module, round-tripped into
// createStateSync, and every event it makes checked against @ag-ui/core 1.0's
// own zod schemas (the real npm package).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EventSchemas, StateDeltaEventSchema, StateSnapshotEventSchema } from '@ag-ui/core/schemas';
import { kInternals, pkg, plain, rng } from './support.mjs';

const { createStateEmitter, createStateSync } = pkg;

/** Asserts that `event` is a valid @ag-ui/core 1.0 event of its type, keeping every field. */
function assertAgUiEvent(event) {
  const any = EventSchemas.safeParse(event);
  assert.ok(any.success, `not an @ag-ui/core event: ${JSON.stringify(event).slice(0, 300)}\n${any.error}`);
  const schema = event.type === 'STATE_DELTA' ? StateDeltaEventSchema : StateSnapshotEventSchema;
  const own = schema.safeParse(event);
  assert.ok(own.success, `not a valid ${event.type}: ${own.error}`);
  assert.deepEqual(plain(own.data), plain(event), 'the schema kept every field (metadata included)');
}

// --- a seeded generator of JSON states and their evolutions -------------------

const KEYS = ['a', 'b', 'title', 'todos', 'x/y', 'm~n', '', '__proto__', 'constructor', 'é', '😀', 'proposal'];

function randomScalar(r) {
  const k = Math.floor(r() * 9);
  switch (k) {
    case 0: return null;
    case 1: return r() < 0.5;
    case 2: return Math.floor(r() * 2000) - 1000;
    case 3: return (r() - 0.5) * 10 ** Math.floor(r() * 30 - 10);
    case 4: return '';
    case 5: return 'text ' + Math.floor(r() * 100);
    case 6: return 'ünïcødé ✓ 😀 \n\t"quoted"\\';
    case 7: return 2 ** 53 - 1;
    default: return 'x'.repeat(Math.floor(r() * 40));
  }
}

function setOwn(object, key, value) {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

function randomValue(r, depth) {
  const roll = r();
  if (depth <= 0 || roll < 0.45) return randomScalar(r);
  if (roll < 0.7) {
    const list = [];
    const n = Math.floor(r() * 5);
    for (let i = 0; i < n; i++) list.push(randomValue(r, depth - 1));
    return list;
  }
  const object = {};
  const n = Math.floor(r() * 5);
  for (let i = 0; i < n; i++) setOwn(object, KEYS[Math.floor(r() * KEYS.length)], randomValue(r, depth - 1));
  return object;
}

// One random edit of a (copied) state: replace/add/remove somewhere, or a big move.
function evolve(r, state) {
  const next = structuredClone(state);
  const edits = 1 + Math.floor(r() * 3);
  for (let e = 0; e < edits; e++) {
    // Walk to a random container.
    let node = next;
    for (let depth = 0; depth < 4; depth++) {
      const children = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
      const containers = children.filter((k) => node[k] !== null && typeof node[k] === 'object');
      if (containers.length === 0 || r() < 0.3) break;
      node = node[containers[Math.floor(r() * containers.length)]];
    }
    const roll = r();
    if (Array.isArray(node)) {
      if (roll < 0.35 || node.length === 0) node.splice(Math.floor(r() * (node.length + 1)), 0, randomValue(r, 2));
      else if (roll < 0.6) node.splice(Math.floor(r() * node.length), 1);
      else if (roll < 0.8) node[Math.floor(r() * node.length)] = randomValue(r, 2);
      else node.reverse();
    } else {
      const keys = Object.keys(node);
      if (roll < 0.4 || keys.length === 0) setOwn(node, KEYS[Math.floor(r() * KEYS.length)], randomValue(r, 3));
      else if (roll < 0.65) delete node[keys[Math.floor(r() * keys.length)]];
      else setOwn(node, keys[Math.floor(r() * keys.length)], randomValue(r, 2));
    }
  }
  return next;
}

// -------------------------------------------------------------------------------

describe('createStateEmitter', () => {
  test('defaults: seq 0, a random epoch per emitter, the initial state, a digest-stamped snapshot', async () => {
    const a = await createStateEmitter({ initialState: { n: 1 } });
    const b = await createStateEmitter();
    assert.equal(a.seq, 0);
    assert.match(a.epoch, /^[0-9a-f-]{32,36}$/);
    assert.notEqual(a.epoch, b.epoch);
    assert.deepEqual(a.state, { n: 1 });
    assert.deepEqual(b.state, {});
    const snap = a.snapshot();
    assert.deepEqual(snap, {
      type: 'STATE_SNAPSHOT',
      snapshot: { n: 1 },
      metadata: { 'agui-state-sync': { seq: 0, epoch: a.epoch, digest: pkg.stateDigest({ n: 1 }) } },
    });
    assertAgUiEvent(snap);
    a.dispose();
    b.dispose();
  });

  test('options reach the engine: startSeq, epoch, digestEvery, guardedPaths, snapshotRatio', async () => {
    const emitter = await createStateEmitter({
      startSeq: 41, epoch: 'e-1', digestEvery: 2, guardedPaths: ['/proposal'], snapshotRatio: 100,
      initialState: { proposal: { amount: 5 }, other: 1 },
    });
    const [event] = emitter.update({ proposal: { amount: 6 }, other: 1 });
    assert.deepEqual(event, {
      type: 'STATE_DELTA',
      delta: [
        { op: 'test', path: '/proposal/amount', value: 5 },
        { op: 'replace', path: '/proposal/amount', value: 6 },
      ],
      metadata: { 'agui-state-sync': { seq: 42, baseSeq: 41, epoch: 'e-1', digest: pkg.stateDigest({ proposal: { amount: 6 }, other: 1 }) } },
    });
    assert.equal(emitter.update({ proposal: { amount: 6 }, other: 2 })[0].metadata['agui-state-sync'].digest, undefined, 'seq 43 is not a multiple of 2');
    assert.deepEqual(emitter.update({ proposal: { amount: 6 }, other: 2 }), [], 'no change, no event');
    assert.equal(emitter.seq, 43);
    emitter.dispose();
  });

  test('invalid options reject with clear errors', async () => {
    for (const options of [
      { startSeq: -1 }, { digestEvery: 1.5 }, { epoch: 7 }, { guardedPaths: '/a' }, { guardedPaths: ['no-slash'] },
      { testAll: 'yes' }, { snapshotRatio: NaN }, { maxDepth: 0 }, { bogus: 1 }, 'nope', { initialState: 1n },
      { initialState: { deep: JSON.parse('['.repeat(200) + ']'.repeat(200)) } },
    ]) {
      await assert.rejects(createStateEmitter(options), (e) => e instanceof Error && /^agui-state-sync: /.test(e.message),
        JSON.stringify(String(options)));
    }
  });

  test('patch(): applies atomically and emits exactly the ops; a failing patch throws with code and opIndex', async () => {
    const emitter = await createStateEmitter({ initialState: { list: [1], n: 0 }, snapshotRatio: 100 });
    const [event] = emitter.patch([{ op: 'add', path: '/list/-', value: 2 }, { op: 'replace', path: '/n', value: 1 }]);
    assert.deepEqual(event.delta, [{ op: 'add', path: '/list/-', value: 2 }, { op: 'replace', path: '/n', value: 1 }]);
    assert.deepEqual(emitter.state, { list: [1, 2], n: 1 });
    const cases = [
      [[{ op: 'add', path: '/list/-', value: 3 }, { op: 'test', path: '/n', value: 99 }], 'precondition-failed', 1],
      [[{ op: 'remove', path: '/missing' }], 'patch-failed', 0],
      [[{ op: 'jump', path: '/n' }], 'invalid-patch', 0],
      [{ not: 'an array' }, 'invalid-patch', 0],
    ];
    for (const [ops, code, opIndex] of cases) {
      assert.throws(() => emitter.patch(ops), (e) => {
        assert.match(e.message, /^agui-state-sync: patch\(\) refused/);
        assert.equal(e.code, code);
        assert.equal(e.opIndex, opIndex);
        return true;
      });
      assert.deepEqual(emitter.state, { list: [1, 2], n: 1 }, 'state unchanged');
      assert.equal(emitter.seq, 1);
    }
    assert.deepEqual(emitter.patch([]), []);
    assert.throws(() => emitter.patch(undefined), TypeError);
    assert.equal(emitter.stats().rejected, 4);
    emitter.dispose();
  });

  test('update(): too deep is refused with code limit-exceeded; values JSON cannot carry', async () => {
    const emitter = await createStateEmitter({ maxDepth: 4 });
    assert.throws(() => emitter.update({ a: { b: { c: { d: { e: 1 } } } } }), (e) => e.code === 'limit-exceeded');
    assert.deepEqual(emitter.state, {});
    assert.throws(() => emitter.update({ big: 1n }), TypeError);
    assert.throws(() => emitter.update(undefined), TypeError);
    // NaN is null on the wire, so in the state too (what receivers reconstruct).
    emitter.update({ x: NaN, u: undefined });
    assert.deepEqual(emitter.state, { x: null });
    emitter.dispose();
  });

  test('encode(): exactly "id: <seq>\\ndata: <JSON>\\n\\n"; heartbeat(); state cached until the next change', async () => {
    const emitter = await createStateEmitter({ epoch: 'e', initialState: { a: 1 } });
    const [event] = emitter.update({ a: 2 });
    assert.equal(emitter.encode(event), `id: 1\ndata: ${JSON.stringify(event)}\n\n`);
    assert.equal(emitter.encode(event, { id: false }), `data: ${JSON.stringify(event)}\n\n`);
    const other = { type: 'RUN_STARTED', threadId: 't', runId: 'r' };
    assert.equal(emitter.encode(other), `data: ${JSON.stringify(other)}\n\n`);
    const multiline = { type: 'CUSTOM', name: 'x', value: 'a\nb\r\nc' };
    assert.deepEqual(emitter.encode(multiline).split('\n').slice(1), ['', ''], 'JSON text is one line');
    assert.equal(emitter.heartbeat(), ': hb 1\n\n');
    const s1 = emitter.state;
    assert.equal(emitter.state, s1, 'parsed once');
    emitter.update({ a: 2 });
    assert.equal(emitter.state, s1, 'no change, same object');
    emitter.update({ a: 3 });
    assert.notEqual(emitter.state, s1);
    assert.deepEqual(emitter.state, { a: 3 });
    emitter.dispose();
    emitter.dispose();
    assert.throws(() => emitter.seq, /StateEmitter was disposed/);
    assert.throws(() => emitter.update({}), /StateEmitter was disposed/);
  });

  test('replaySince(): current, missed deltas as first sent, snapshot when too old / future / other epoch', async () => {
    const emitter = await createStateEmitter({ epoch: 'e', replayMaxEvents: 4, snapshotRatio: 100, initialState: { list: [] } });
    const sent = [];
    for (let i = 0; i < 6; i++) sent.push(...emitter.update({ list: [...emitter.state.list, i] }));
    assert.equal(emitter.seq, 6);
    assert.deepEqual(emitter.replaySince(6), []);
    assert.deepEqual(emitter.replaySince(4), sent.slice(4));
    assert.deepEqual(emitter.replaySince(4, 'e'), sent.slice(4));
    assert.equal(emitter.replaySince(4, 'other')[0].type, 'STATE_SNAPSHOT');
    assert.equal(emitter.replaySince(1)[0].type, 'STATE_SNAPSHOT', 'older than the ring (4 events)');
    assert.equal(emitter.replaySince(9)[0].type, 'STATE_SNAPSHOT', 'future seq');
    assert.throws(() => emitter.replaySince(-1), TypeError);
    assert.throws(() => emitter.replaySince(1.5), TypeError);
    const stats = emitter.stats();
    assert.equal(stats.replays, 2);
    assert.equal(stats.replaySnapshots, 3);
    emitter.dispose();
  });

  test("replaySince(seq, epoch, held): leaves out the held seqs; '' is an epoch, null is no check", async () => {
    const emitter = await createStateEmitter({ epoch: 'e', snapshotRatio: 100, initialState: { list: [] } });
    const sent = [];
    for (let i = 0; i < 6; i++) sent.push(...emitter.update({ list: [...emitter.state.list, i] }));
    assert.deepEqual(emitter.replaySince(2, 'e', [4, 6]), [sent[2], sent[4]]);
    assert.deepEqual(emitter.replaySince(2, null, [6, 4, 4]), [sent[2], sent[4]]);
    assert.deepEqual(emitter.replaySince(2, undefined, [3, 4, 5, 6]), [sent[2]], 'never the first missed delta');
    assert.deepEqual(emitter.replaySince(2, 'e', []), sent.slice(2));
    assert.equal(emitter.replaySince(2, '', [4])[0].type, 'STATE_SNAPSHOT', "'' is not our epoch");
    assert.deepEqual(emitter.replaySince(6, 'e', [7]), []);
    for (const bad of ['4', [4, '5'], [-1], [1.5], [NaN], { length: 1, 0: 4 }]) {
      assert.throws(() => emitter.replaySince(2, 'e', bad), TypeError, JSON.stringify(bad));
    }
    const blank = await createStateEmitter({ epoch: '', snapshotRatio: 100 });
    blank.update({ a: 1 });
    blank.update({ a: 2 });
    assert.equal(blank.epoch, '');
    assert.deepEqual(blank.replaySince(1, '').map((e) => e.metadata['agui-state-sync'].seq), [2], "'' matches an emitter without an epoch");
    assert.equal(blank.replaySince(1, 'x')[0].type, 'STATE_SNAPSHOT');
    blank.dispose();
    emitter.dispose();
  });

  test('1,000 seeded random evolutions: the StateSync equals the emitter after every update; every event is a valid @ag-ui/core event', async () => {
    let checked = 0;
    let events = 0;
    const kinds = { STATE_DELTA: 0, STATE_SNAPSHOT: 0 };
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) {
      const r = rng(seed);
      let state = randomValue(r, 3);
      if (state === null || typeof state !== 'object') state = { seed: state };
      const emitter = await createStateEmitter({ initialState: state, guardedPaths: ['/proposal'], testAll: seed % 3 === 0 });
      const sync = await createStateSync();
      const first = emitter.snapshot();
      assertAgUiEvent(first);
      sync.feed(emitter.encode(first));
      for (let step = 0; step < 100; step++) {
        state = evolve(r, state);
        const out = emitter.update(state);
        for (const event of out) {
          assertAgUiEvent(event);
          kinds[event.type]++;
          events++;
          const outcomes = sync.feed(emitter.encode(event));
          assert.deepEqual(outcomes.map((o) => o.kind), ['applied'], `seed ${seed} step ${step}: ${JSON.stringify(outcomes)}`);
        }
        assert.deepEqual(plain(sync.state), plain(state), `seed ${seed} step ${step}`);
        assert.deepEqual(emitter.state, plain(state));
        checked++;
      }
      assert.equal(sync.status, 'synced');
      assert.equal(sync.lastSeq, emitter.seq);
      assert.equal(sync.epoch, emitter.epoch);
      const metrics = sync.metrics();
      assert.equal(metrics.resyncs, 0);
      assert.ok(metrics.digestChecks > 0, 'digests were checked');
      for (const event of emitter.replaySince(Math.max(0, emitter.seq - 3))) assertAgUiEvent(event);
      sync.dispose();
      emitter.dispose();
    }
    assert.equal(checked, 1000);
    assert.ok(kinds.STATE_DELTA > 500 && kinds.STATE_SNAPSHOT > 0, JSON.stringify(kinds));
    assert.ok(events >= 900);
  });

  test('replay heals a dropped event without a snapshot', async () => {
    const emitter = await createStateEmitter({ initialState: { todos: [] }, snapshotRatio: 100 });
    const sync = await createStateSync();
    sync.feed(emitter.encode(emitter.snapshot()));
    const sent = [];
    for (let i = 0; i < 5; i++) sent.push(...emitter.update({ todos: [...emitter.state.todos, { id: i, text: `todo ${i}` }] }));
    for (const [i, event] of sent.entries()) if (i !== 1) sync.feed(emitter.encode(event)); // seq 2 is lost
    assert.deepEqual(sync.end().map((o) => [o.kind, o.reason]), [['resync', 'gap']]);
    assert.equal(sync.status, 'resyncing');
    sync.reset();
    const request = sync.resyncRequest();
    assert.equal(request.lastSeq, 1);
    const replay = emitter.replaySince(request.lastSeq, sync.epoch);
    assert.deepEqual(replay.map((e) => e.type), Array(4).fill('STATE_DELTA'));
    for (const event of replay) sync.feed(emitter.encode(event));
    assert.equal(sync.status, 'synced');
    assert.deepEqual(sync.state, emitter.state);
    const metrics = sync.metrics();
    assert.equal(metrics.resyncSnapshots, 0, 'healed by replay, no snapshot tax');
    assert.equal(metrics.snapshots, 1);
    sync.dispose();
    emitter.dispose();
  });

  test('4,000 update/replay cycles and 2,000 create/update/dispose cycles leave the emitter heap flat', async () => {
    // Every buffer bounded at 8: the replay ring and the edits' change log.
    const probe = await createStateEmitter({ replayMaxEvents: 8, editHistory: 8 });
    const { engine } = probe[kInternals]();
    const cycle = async () => {
      const e = await createStateEmitter({ initialState: { list: [1, 2, 3] } });
      e.update({ list: [1, 2, 3, 4], t: 'x'.repeat(100) });
      e.replaySince(0);
      assert.throws(() => e.patch([{ op: 'remove', path: '/nope' }]));
      e.dispose();
    };
    const churn = (i) => {
      probe.update({ i, list: Array.from({ length: i % 10 }, (_, k) => k) });
      probe.replaySince(Math.max(0, probe.seq - 3));
    };
    for (let i = 0; i < 200; i++) {
      await cycle();
      churn(i);
    }
    // The replay ring and the change log are full (8 events); their sizes no longer change.
    const before = engine.heapBytesInUse();
    for (let i = 0; i < 2000; i++) await cycle();
    assert.equal(engine.heapBytesInUse(), before);
    // 4,000 more events in 4 blocks: the same states, and seq moves by a multiple
    // of digestEvery (16), so the ring holds events of the same sizes as before.
    // The ring's events are re-allocated in between, and dlmalloc hands a free
    // chunk's remainder smaller than its minimum chunk (16 bytes) to the
    // allocation it splits: the same live objects can count 8-16 bytes more or
    // less depending on where they landed. A leak of even 1 byte per cycle would
    // show as 1,000 bytes per block and grow block after block; so each block
    // must end within one minimum chunk of the start.
    const MIN_CHUNK = 16;
    for (let block = 0; block < 4; block++) {
      for (let i = 0; i < 1000; i++) churn((block * 1000 + i) % 200);
      const drift = engine.heapBytesInUse() - before;
      assert.ok(Math.abs(drift) <= MIN_CHUNK, `block ${block}: heap moved by ${drift} bytes`);
    }
    probe.dispose();
  });
});
