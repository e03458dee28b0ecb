// diffOps (the proxy's snapshot rebase, js/src/server/state-diff.js): on seeded
// random pairs of JSON values, the operations turn the first into the second
// (applied by the package's own RFC 6902 applier and by the engine), touch
// nothing the two share, and are empty for equal values.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { jsDir, pkg, plain, rng } from './support.mjs';

const { diffOps } = await import(join(jsDir, 'src', 'server', 'state-diff.js'));
const { applyDelta } = await import(join(jsDir, 'src', 'shared', 'state-mirror.js'));
const { createStateEmitter } = pkg;

const KEYS = ['a', 'b', '__proto__', 'we/ird~key', '', 'list'];

function randomValue(random, depth) {
  const r = random();
  if (depth <= 0 || r < 0.35) return [null, true, 0, -1.5, 'x', '', 'y'][Math.floor(random() * 7)];
  if (r < 0.65) return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth - 1));
  const out = {};
  for (const key of KEYS) if (random() < 0.4) Object.defineProperty(out, key, { value: randomValue(random, depth - 1), enumerable: true, writable: true, configurable: true });
  return out;
}

// `value` changed here and there (so the pair shares most of itself).
function mutate(random, value, depth) {
  if (random() < 0.15) return randomValue(random, depth);
  if (Array.isArray(value)) {
    const out = value.map((v) => mutate(random, v, depth - 1));
    if (random() < 0.2) out.push(randomValue(random, 1));
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const key of Object.keys(value)) if (random() > 0.1) Object.defineProperty(out, key, { value: mutate(random, value[key], depth - 1), enumerable: true, writable: true, configurable: true });
    if (random() < 0.2) out[KEYS[Math.floor(random() * KEYS.length)].replace('__proto__', 'p')] = randomValue(random, 1);
    return out;
  }
  return value;
}

test('diffOps turns a into b, on 2,000 seeded pairs (applied in JS and by the engine)', async () => {
  const emitter = await createStateEmitter({ initialState: {} });
  try {
    for (let seed = 1; seed <= 2000; seed++) {
      const random = rng(seed);
      const a = { doc: randomValue(random, 4) };
      const b = random() < 0.1 ? structuredClone(a) : { doc: mutate(random, a.doc, 4) };
      const ops = diffOps(a, b);
      assert.deepEqual(plain(applyDelta(a, ops)), plain(b), `seed ${seed}: ${JSON.stringify(ops)}`);
      if (JSON.stringify(a) === JSON.stringify(b)) assert.deepEqual(ops, [], `seed ${seed}: equal values, no ops`);
      emitter.update(a);
      emitter.patch(ops);
      assert.deepEqual(plain(emitter.state), plain(b), `seed ${seed}: the engine applies them too`);
    }
  } finally {
    emitter.dispose();
  }
});

test('diffOps writes only where the values differ', () => {
  const a = { form: { name: 'Ada', note: '' }, list: [1, 2, 3], keep: { deep: [1] } };
  const b = { form: { name: 'Grace', note: '' }, list: [1, 2], keep: { deep: [1] }, added: true };
  assert.deepEqual(diffOps(a, b), [
    { op: 'replace', path: '/form/name', value: 'Grace' },
    { op: 'replace', path: '/list', value: [1, 2] },
    { op: 'add', path: '/added', value: true },
  ]);
  assert.deepEqual(diffOps({ 'a/b': 1, '~': 2 }, {}), [{ op: 'remove', path: '/a~1b' }, { op: 'remove', path: '/~0' }]);
  assert.deepEqual(diffOps(1, [1]), [{ op: 'replace', path: '', value: [1] }]);
});
