// A store-bound emitter's line rules, which are the core's (StoreLine,
// js/src/engine/store-line.js over src/facade/store_line_facade.h, the same
// rules Python's emitter follows): what `state` answers while a write is under
// way, a stored log that does not apply, and caps of 0. Against memoryStore(),
// its appends gated or rewritten by the test (store-support.mjs storeOf).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createStateEmitter, prng, server, storeOf, until } from './store-support.mjs';

const { memoryStore } = server;

test('while a write is under way, state and seq are the committed ones; then the write\'s (seeded)', async () => {
  const raw = memoryStore();
  let release = null;
  const gated = storeOf(raw, {
    incrementalState: true,
    append: async (key, batch) => {
      await new Promise((resolve) => { release = resolve; });
      return raw.append(key, batch);
    },
  });
  const emitter = await createStateEmitter({ store: gated, key: 'held', initialState: { n: 0, items: [] } });
  const random = prng(23);
  let expected = { n: 0, items: [] };
  for (let i = 1; i <= 40; i++) {
    const ops = random() < 0.5 ? [{ op: 'replace', path: '/n', value: i }] : [{ op: 'add', path: '/items/-', value: `item ${i}` }];
    const write = emitter.patch(ops);
    await until(() => release !== null, 'the append is held');
    assert.deepEqual(emitter.state, expected, `write ${i}: the committed state while it is under way`);
    assert.equal(emitter.seq, i - 1);
    const next = structuredClone(expected);
    if (ops[0].op === 'replace') next.n = i;
    else next.items.push(`item ${i}`);
    release();
    release = null;
    await write;
    expected = next;
    assert.deepEqual(emitter.state, expected, `write ${i}: the write's state once it landed`);
    assert.equal(emitter.seq, i);
  }
  emitter.dispose();
});

test('a stored log that does not apply to its stored state: store-conflict naming the key, nothing created', async () => {
  const raw = memoryStore();
  const text = 'x'.repeat(500); // deltas stay far below a snapshot
  const a = await createStateEmitter({ store: raw, key: 'bent', initialState: { n: 0, text } });
  for (let i = 1; i <= 3; i++) await a.patch([{ op: 'replace', path: '/n', value: i }]);
  a.dispose();
  const stored = await raw.load('bent');
  assert.deepEqual(stored.events.map((e) => JSON.parse(e).type), ['STATE_DELTA', 'STATE_DELTA', 'STATE_DELTA']);
  // The log's last delta rewritten behind the writers' backs: it no longer applies.
  const last = JSON.parse(stored.events.at(-1));
  last.delta = [{ op: 'replace', path: '/missing/x', value: 1 }];
  const bent = storeOf(raw, { load: async () => ({ ...stored, stateSeq: 0, events: [...stored.events.slice(0, -1), JSON.stringify(last)] }) });
  await assert.rejects(createStateEmitter({ store: bent, key: 'bent' }), (error) => {
    assert.equal(error.code, 'store-conflict');
    assert.match(error.message, /key "bent"/);
    return true;
  });
  const notJson = storeOf(raw, { load: async () => ({ ...stored, events: ['{'] }) });
  await assert.rejects(createStateEmitter({ store: notJson, key: 'bent' }), { code: 'invalid-json' });
  const b = await createStateEmitter({ store: raw, key: 'bent' }); // the store itself is unchanged
  assert.deepEqual(b.state, { n: 3, text });
  b.dispose();
});

test('replay caps of 0: every write carries the state, and the next instance continues it', async () => {
  const raw = memoryStore();
  let withState = 0;
  const counting = storeOf(raw, {
    incrementalState: true,
    append: (key, batch) => {
      if (batch.state !== undefined) withState++;
      return raw.append(key, batch);
    },
  });
  const a = await createStateEmitter({ store: counting, key: 'zero', initialState: { n: 0 }, replayMaxEvents: 0, replayMaxBytes: 0 });
  for (let i = 1; i <= 5; i++) await a.patch([{ op: 'replace', path: '/n', value: i }]);
  assert.equal(withState, 5);
  const b = await createStateEmitter({ store: raw, key: 'zero' });
  assert.equal(b.seq, 5);
  assert.deepEqual(b.state, { n: 5 });
  a.dispose();
  b.dispose();
});
