// The JS state mirror: structural sharing, prototype safety, and agreement with
// the C++ engine on randomized delta streams.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyDelta, assertMirrors, delta, engineState, pkg, plain, rng, snapshot, sse } from './support.mjs';

const { createStateSync } = pkg;

describe('structural sharing', () => {
  test('untouched subtrees keep their identity; touched spines are new objects', async () => {
    const sync = await createStateSync();
    sync.feed(sse(snapshot({
      a: { deep: { x: 1 }, other: { y: 2 } },
      list: [{ id: 1 }, { id: 2 }, { id: 3 }],
      untouched: { big: [1, 2, 3] },
    }, 1)));
    const s1 = sync.state;
    sync.feed(sse(delta([{ op: 'replace', path: '/a/deep/x', value: 10 }], 2)));
    const s2 = sync.state;
    assert.notEqual(s2, s1);
    assert.notEqual(s2.a, s1.a);
    assert.notEqual(s2.a.deep, s1.a.deep);
    assert.equal(s2.a.other, s1.a.other);
    assert.equal(s2.list, s1.list);
    assert.equal(s2.untouched, s1.untouched);
    assert.deepEqual(s1.a.deep, { x: 1 }, 'the previous state is never modified');

    sync.feed(sse(delta([
      { op: 'add', path: '/list/1', value: { id: 9 } },
      { op: 'remove', path: '/list/3' },
      { op: 'test', path: '/list/0/id', value: 1 },
    ], 3)));
    const s3 = sync.state;
    assert.deepEqual(s3.list, [{ id: 1 }, { id: 9 }, { id: 2 }]);
    assert.equal(s3.list[0], s2.list[0]);
    assert.equal(s3.list[2], s2.list[1]);
    assert.equal(s3.a, s2.a);
    assert.equal(s2.list.length, 3);

    sync.feed(sse(delta([{ op: 'move', from: '/a/other', path: '/moved' }], 4)));
    const s4 = sync.state;
    assert.equal(s4.moved, s3.a.other, 'move keeps the moved value');
    assert.equal(s4.a.deep, s3.a.deep);
    assert.equal(s4.untouched, s1.untouched);

    sync.feed(sse(delta([{ op: 'copy', from: '/untouched', path: '/copied' }], 5)));
    assert.equal(sync.state.copied, s1.untouched);
    assertMirrors(sync);
    sync.dispose();
  });

  test('several ops on one spine in one delta copy it once and stay correct', () => {
    const root = { a: { b: { c: 1 } }, z: {} };
    const next = applyDelta(root, [
      { op: 'add', path: '/a/b/d', value: 2 },
      { op: 'add', path: '/a/b/e', value: 3 },
      { op: 'replace', path: '/a/b/c', value: 0 },
    ]);
    assert.deepEqual(next, { a: { b: { c: 0, d: 2, e: 3 } }, z: {} });
    assert.deepEqual(root, { a: { b: { c: 1 } }, z: {} });
    assert.equal(next.z, root.z);
  });

  test('copy then edit: the copy and the original never alias', () => {
    const root = { a: { n: 1 } };
    const next = applyDelta(root, [
      { op: 'replace', path: '/a/n', value: 2 }, // /a is now a fresh copy
      { op: 'copy', from: '/a', path: '/b' },
      { op: 'replace', path: '/a/n', value: 3 },
      { op: 'add', path: '/b/m', value: 4 },
    ]);
    assert.deepEqual(next, { a: { n: 3 }, b: { n: 2, m: 4 } });
    assert.deepEqual(root, { a: { n: 1 } });
  });

  test('whole-document operations, "-" and escaped pointers', () => {
    assert.deepEqual(applyDelta({ a: 1 }, [{ op: 'replace', path: '', value: [1] }]), [1]);
    assert.deepEqual(applyDelta({ a: 1 }, [{ op: 'add', path: '', value: { b: 2 } }]), { b: 2 });
    assert.deepEqual(applyDelta([1, 2], [{ op: 'add', path: '/-', value: 3 }]), [1, 2, 3]);
    assert.deepEqual(applyDelta({ 'a/b': { 'm~n': 1 } }, [{ op: 'replace', path: '/a~1b/m~0n', value: 2 }]),
      { 'a/b': { 'm~n': 2 } });
    assert.deepEqual(applyDelta({ '': { ' ': 1 } }, [{ op: 'replace', path: '// ', value: 2 }]), { '': { ' ': 2 } });
    assert.deepEqual(applyDelta({ a: [1, 2] }, [{ op: 'move', from: '/a/0', path: '/a/-' }]), { a: [2, 1] });
    assert.throws(() => applyDelta({}, [{ op: 'remove', path: '/missing' }]));
    assert.throws(() => applyDelta([1], [{ op: 'replace', path: '/01', value: 0 }]));
  });
});

describe('prototype safety', () => {
  const dangerous = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__'];

  test('dangerous keys become own data properties and never touch a prototype', async () => {
    const sync = await createStateSync();
    sync.feed('data: {"type":"STATE_SNAPSHOT","snapshot":{"__proto__":{"polluted":1},"obj":{}},"metadata":{"seq":1}}\n\n');
    let seq = 2;
    for (const key of dangerous) {
      const outcomes = sync.feed(sse(delta([
        { op: 'add', path: `/obj/${key}`, value: { polluted: true } },
        { op: 'add', path: `/${key}x`, value: 1 },
      ], seq++)));
      assert.equal(outcomes[0].kind, 'applied', key);
    }
    sync.feed(sse(delta([{ op: 'add', path: '/__proto__/polluted2', value: true }], seq++)));
    sync.feed(sse(delta([{ op: 'copy', from: '/obj/__proto__', path: '/obj/prototype' }], seq++)));
    sync.feed(sse(delta([{ op: 'move', from: '/obj/constructor', path: '/moved' }], seq++)));
    sync.feed(sse(delta([{ op: 'replace', path: '/obj/toString', value: 'str' }], seq++)));
    const state = sync.state;
    assert.equal(Object.getPrototypeOf(state), Object.prototype);
    assert.equal(Object.getPrototypeOf(state.obj), Object.prototype);
    assert.ok(Object.prototype.hasOwnProperty.call(state, '__proto__'));
    assert.deepEqual(Object.getOwnPropertyDescriptor(state, '__proto__').value, { polluted: 1, polluted2: true });
    for (const key of dangerous) {
      if (key === 'constructor') continue; // moved away
      assert.ok(Object.prototype.hasOwnProperty.call(state.obj, key), key);
    }
    assert.equal(state.obj.toString, 'str');
    assert.deepEqual(state.moved, { polluted: true });
    assert.equal({}.polluted, undefined);
    assert.equal({}.polluted2, undefined);
    assert.equal(Object.prototype.polluted, undefined);
    assert.equal(typeof {}.toString, 'function');
    sync.feed(sse(delta([{ op: 'remove', path: '/__proto__' }, { op: 'remove', path: '/obj/hasOwnProperty' }], seq++)));
    assert.ok(!Object.prototype.hasOwnProperty.call(sync.state, '__proto__'));
    assert.equal(Object.getPrototypeOf(sync.state), Object.prototype);
    assert.equal(typeof Object.prototype.hasOwnProperty, 'function');
    assertMirrors(sync);
    sync.dispose();
  });

  test('applyDelta with __proto__ keys on plain objects', () => {
    const root = JSON.parse('{"a":{}}');
    const next = applyDelta(root, [
      { op: 'add', path: '/a/__proto__', value: { x: 1 } },
      { op: 'add', path: '/a/__proto__/y', value: 2 },
      { op: 'replace', path: '/a/__proto__/x', value: 3 },
    ]);
    assert.equal(Object.getPrototypeOf(next.a), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(next.a, '__proto__').value, { x: 3, y: 2 });
    assert.equal({}.x, undefined);
    assert.throws(() => applyDelta({}, [{ op: 'replace', path: '/__proto__', value: 1 }]), /does not exist/);
    assert.throws(() => applyDelta({}, [{ op: 'remove', path: '/constructor' }]), /does not exist/);
  });
});

describe('mirror agrees with the engine on random streams', () => {
  const KEYS = ['a', 'b', 'c', '__proto__', 'x/y', 'm~n', '', '0', 'constructor'];

  function randomValue(r, depth) {
    const k = r();
    if (depth > 3 || k < 0.35) return [null, true, false, 0, -1.5, 1e21, 'str', 'ünï', ''][Math.floor(r() * 9)];
    if (k < 0.65) return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
    const o = {};
    for (let i = Math.floor(r() * 4); i > 0; i--) {
      Object.defineProperty(o, KEYS[Math.floor(r() * KEYS.length)],
        { value: randomValue(r, depth + 1), enumerable: true, writable: true, configurable: true });
    }
    return o;
  }

  const esc = (t) => t.replace(/~/g, '~0').replace(/\//g, '~1');

  function paths(value, prefix, out) {
    out.push(prefix);
    if (Array.isArray(value)) value.forEach((v, i) => paths(v, `${prefix}/${i}`, out));
    else if (value && typeof value === 'object') for (const k of Object.keys(value)) paths(value[k], `${prefix}/${esc(k)}`, out);
    return out;
  }

  function containers(value) {
    return paths(value, '', []).filter((p) => {
      let v = value;
      for (const t of p.split('/').slice(1)) v = v[t.replace(/~1/g, '/').replace(/~0/g, '~')];
      return v !== null && typeof v === 'object';
    });
  }

  function randomOp(r, state) {
    const all = paths(state, '', []).filter((p) => p !== '');
    const pick = (list) => list[Math.floor(r() * list.length)];
    const kind = r();
    if (all.length === 0 || kind < 0.35) {
      const parent = pick(containers(state));
      let v = state;
      for (const t of parent.split('/').slice(1)) v = v[t.replace(/~1/g, '/').replace(/~0/g, '~')];
      const last = Array.isArray(v) ? (r() < 0.5 ? '-' : String(Math.floor(r() * (v.length + 1)))) : esc(pick(KEYS));
      return { op: 'add', path: `${parent}/${last}`, value: randomValue(r, 1) };
    }
    if (kind < 0.55) return { op: 'replace', path: pick(all), value: randomValue(r, 1) };
    if (kind < 0.75) return { op: 'remove', path: pick(all) };
    const from = pick(all);
    const targets = containers(state).filter((p) => !(p + '/').startsWith(from + '/'));
    if (targets.length === 0) return { op: 'remove', path: from };
    const parent = pick(targets);
    return { op: r() < 0.5 ? 'move' : 'copy', from, path: `${parent}/${esc(pick(KEYS))}` };
  }

  test('2,000 random deltas: JS mirror === engine state after every batch, old states intact', async () => {
    const r = rng(20240611);
    const sync = await createStateSync();
    sync.feed(sse(snapshot({ a: { b: [1, 2, { c: 'x' }] }, c: {} }, 1)));
    let seq = 2;
    let applied = 0;
    const history = [];
    for (let round = 0; round < 400; round++) {
      let chunk = '';
      let model = plain(sync.state);
      for (let i = 0; i < 5; i++) {
        const ops = [];
        for (let j = Math.floor(r() * 3) + 1; j > 0; j--) {
          const op = randomOp(r, model);
          ops.push(op);
          try {
            model = applyDelta(model, [op]);
          } catch {
            ops.pop(); // e.g. adding under a key that a previous op removed
          }
        }
        chunk += sse(delta(ops, seq, seq - 1));
        seq++;
      }
      const outcomes = sync.feed(chunk);
      for (const o of outcomes) {
        assert.equal(o.kind, 'applied', JSON.stringify(o));
        applied++;
      }
      history.push([sync.state, JSON.stringify(sync.state)]);
      assertMirrors(sync, `round ${round}`);
    }
    assert.equal(applied, 2000);
    for (const [state, json] of history) assert.equal(JSON.stringify(state), json, 'an old state changed');
    assert.equal(sync.metrics().mirrorReloads, 0);
    assert.deepEqual(engineState(sync), plain(sync.state));
    sync.dispose();
  });
});
