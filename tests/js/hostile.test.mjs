// The hostile-input catalogue (tests/native/test_hostile_input.cpp) through the
// public JS API and the WASM engine: every case gets a clear outcome, leaves
// the state exactly as it was (the same object, deep-equal to a copy taken
// before), and throws nothing. Cases that the wire defines as data (invalid
// UTF-8 becomes U+FFFD, duplicate keys keep the last, __proto__ is a key) apply
// as data, identically in the mirror and the engine, and pollute nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertMirrors, pkg } from './support.mjs';

const { createStateSync } = pkg;
const encoder = new TextEncoder();

const INITIAL = { proposal: { recipient: 'alice', amount: 10 }, list: [1, 2, 3] };
const SNAPSHOT = `data: ${JSON.stringify({ type: 'STATE_SNAPSHOT', snapshot: INITIAL, metadata: { seq: 1 } })}\n\n`;

/** A synced StateSync at seq 1 holding INITIAL. */
async function synced(options) {
  const sync = await createStateSync(options);
  const [applied] = sync.feed(SNAPSHOT);
  assert.equal(applied.kind, 'applied');
  assert.equal(sync.status, 'synced');
  return sync;
}

/** The delta seq 1 -> 2 with `opsJson` spliced in verbatim (it may be invalid JSON on purpose). */
const delta = (opsJson) => `data: {"type":"STATE_DELTA","delta":${opsJson},"metadata":{"seq":2,"baseSeq":1}}\n\n`;

/** Feeds `chunk`; any throw fails the test (no hostile input is an API misuse). */
function feed(sync, chunk) {
  let outcomes;
  assert.doesNotThrow(() => {
    outcomes = sync.feed(chunk);
  });
  assert.ok(Array.isArray(outcomes));
  return outcomes;
}

/** Runs `fn`, then asserts the state is the very same object, deep-equal to before, at the same seq. */
function untouched(sync, fn) {
  const before = sync.state;
  const copy = structuredClone(before);
  const seq = sync.lastSeq;
  const result = fn();
  assert.equal(sync.state, before, 'the state object is the same');
  assert.deepEqual(sync.state, copy, 'and holds the same value');
  assert.deepEqual(sync.state, INITIAL);
  assert.equal(sync.lastSeq, seq);
  assertMirrors(sync);
  return result;
}

const kinds = (outcomes) => outcomes.map((o) => [o.kind, o.kind === 'error' ? o.code : o.reason]);

/** A limit or parse failure: an error outcome with `code`, then a resync with `reason`. */
function assertRejected(outcomes, code, reason = code) {
  assert.deepEqual(kinds(outcomes), [['error', code], ['resync', reason]]);
  assert.equal(typeof outcomes[0].message, 'string');
  assert.ok(outcomes[0].message.length > 0);
  assert.equal(typeof outcomes[1].detail, 'string');
  assert.equal(outcomes[1].lastSeq, 1);
}

describe('hostile input through createStateSync (WASM)', () => {
  test('nesting 1,000,000 deep: limit-exceeded, state untouched', async () => {
    const sync = await synced({ maxEventBytes: 4 << 20 });
    const deep = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
    const outcomes = untouched(sync, () => feed(sync, delta(`[{"op":"add","path":"/x","value":${deep}}]`)));
    assertRejected(outcomes, 'limit-exceeded');
    assert.equal(sync.status, 'resyncing');
    // The engine still works: a good snapshot answers the resync.
    assert.equal(feed(sync, SNAPSHOT.replace('"seq":1', '"seq":3'))[0].kind, 'applied');
    assert.equal(sync.status, 'synced');
    sync.dispose();
    // The same depth in a snapshot is refused too.
    const other = await synced({ maxEventBytes: 4 << 20 });
    const snapshotDeep = `data: {"type":"STATE_SNAPSHOT","snapshot":${deep},"metadata":{"seq":9}}\n\n`;
    assertRejected(untouched(other, () => feed(other, snapshotDeep)), 'limit-exceeded');
    other.dispose();
  });

  test('a 100 MB event over maxEventBytes: limit-exceeded, never buffered whole, state untouched', async () => {
    const sync = await synced(); // default maxEventBytes: 8 MiB
    const mib = new Uint8Array(1 << 20).fill(0x61);
    const outcomes = untouched(sync, () => {
      const all = feed(sync, 'data: {"type":"STATE_DELTA","delta":[{"op":"add","path":"/x","value":"');
      for (let i = 0; i < 100; i++) all.push(...feed(sync, mib));
      all.push(...feed(sync, '"}],"metadata":{"seq":2,"baseSeq":1}}\n\n'));
      return all;
    });
    assertRejected(outcomes, 'limit-exceeded');
    assert.match(outcomes[0].message, /maxEventBytes/);
    assert.equal(sync.metrics().events, 2, 'the snapshot and the oversized event');
    sync.dispose();
  });

  test('invalid UTF-8 becomes U+FFFD (as SSE decoding defines); lone surrogates in \\u escapes are invalid-json', async () => {
    const sync = await synced();
    const bytes = [...encoder.encode('data: {"type":"STATE_DELTA","delta":[{"op":"add","path":"/s","value":"a'),
      0xff, 0xfe, 0xc3, // two invalid bytes and a truncated sequence
      ...encoder.encode('b"}],"metadata":{"seq":2,"baseSeq":1}}\n\n')];
    assert.deepEqual(kinds(feed(sync, new Uint8Array(bytes))), [['applied', undefined]]);
    assert.equal(sync.state.s, 'a\uFFFD\uFFFD\uFFFDb');
    assertMirrors(sync);
    sync.dispose();

    for (const escape of ['\\ud800', '\\udc00x', '\\ud800\\u0041', 'x\\udbff']) {
      const s = await synced();
      const outcomes = untouched(s, () => feed(s, delta(`[{"op":"add","path":"/s","value":"${escape}"}]`)));
      assertRejected(outcomes, 'invalid-json', 'malformed');
      s.dispose();
    }
  });

  test('NaN / Infinity literals and numbers beyond double range: invalid-json, state untouched', async () => {
    for (const literal of ['NaN', 'Infinity', '-Infinity', '1e400', '-1e999', '1' + '0'.repeat(400)]) {
      const sync = await synced();
      const outcomes = untouched(sync, () =>
        feed(sync, delta(`[{"op":"replace","path":"/proposal/amount","value":${literal}}]`)));
      assertRejected(outcomes, 'invalid-json', 'malformed');
      assert.equal(sync.status, 'resyncing');
      sync.dispose();
    }
  });

  test('duplicate keys: the last one wins, as in JSON.parse, in the engine and the mirror alike', async () => {
    const sync = await synced();
    assert.deepEqual(kinds(feed(sync, delta('[{"op":"replace","path":"/list/0","value":1,"value":"second"}]'))),
      [['applied', undefined]]);
    assert.equal(sync.state.list[0], 'second');
    assertMirrors(sync);
    feed(sync, 'data: {"type":"STATE_SNAPSHOT","snapshot":{"a":1,"a":{"b":2},"a":3},"metadata":{"seq":5}}\n\n');
    assert.deepEqual(sync.state, { a: 3 });
    assertMirrors(sync);
    sync.dispose();
  });

  test('__proto__ / constructor / prototype are own data keys; no prototype is polluted', async () => {
    const sync = await synced();
    const outcomes = feed(sync, delta(
      '[{"op":"add","path":"/__proto__","value":{"polluted":true}},' +
      '{"op":"add","path":"/constructor","value":{"prototype":{"x":1}}},' +
      '{"op":"add","path":"/constructor/prototype/y","value":2},' +
      '{"op":"add","path":"/proposal/__proto__","value":{"polluted":"nested"}},' +
      '{"op":"copy","from":"/__proto__","path":"/prototype"}]'));
    assert.deepEqual(kinds(outcomes), [['applied', undefined]]);
    const state = sync.state;
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const descriptor = Object.getOwnPropertyDescriptor(state, key);
      assert.ok(descriptor, `${key} is an own property`);
      assert.ok('value' in descriptor && descriptor.enumerable, `${key} is an enumerable data property`);
    }
    assert.deepEqual(Object.getOwnPropertyDescriptor(state, '__proto__').value, { polluted: true });
    assert.deepEqual(Object.getOwnPropertyDescriptor(state.proposal, '__proto__').value, { polluted: 'nested' });
    assert.deepEqual(state.constructor, { prototype: { x: 1, y: 2 } });
    assert.deepEqual(Object.getOwnPropertyDescriptor(state, 'prototype').value, { polluted: true });
    // Prototype chains are the plain ones; nothing leaked into Object.prototype.
    assert.equal(Object.getPrototypeOf(state), Object.prototype);
    assert.equal(Object.getPrototypeOf(state.proposal), Object.prototype);
    assert.equal(Object.getPrototypeOf(state.constructor), Object.prototype);
    assert.equal(Object.getPrototypeOf(state.constructor.prototype), Object.prototype);
    for (const key of ['polluted', 'x', 'y']) {
      assert.equal(Object.prototype[key], undefined, `Object.prototype.${key}`);
      assert.equal({}[key], undefined);
    }
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
    assertMirrors(sync);
    // Through a snapshot too.
    feed(sync, 'data: {"type":"STATE_SNAPSHOT","snapshot":{"__proto__":{"polluted":1},"constructor":{"prototype":{"z":1}}},"metadata":{"seq":7}}\n\n');
    assert.deepEqual(Object.getOwnPropertyDescriptor(sync.state, '__proto__').value, { polluted: 1 });
    assert.equal(Object.getPrototypeOf(sync.state), Object.prototype);
    assert.equal({}.polluted, undefined);
    assert.equal({}.z, undefined);
    assertMirrors(sync);
    sync.dispose();
  });

  test('pointers through scalars, negative and leading-zero indices, a move into its own child: refused whole', async () => {
    const cases = [
      ['[{"op":"add","path":"/proposal/amount/x","value":1}]', 'patch-failed'], // through a scalar
      ['[{"op":"replace","path":"/list/-1","value":1}]', 'patch-failed'], // negative index
      ['[{"op":"replace","path":"/list/01","value":1}]', 'patch-failed'], // leading zero
      ['[{"op":"add","path":"/list/4","value":1}]', 'patch-failed'], // past the end
      ['[{"op":"remove","path":"/list/-"}]', 'patch-failed'],
      ['[{"op":"move","from":"/proposal","path":"/proposal/inner"}]', 'patch-failed'], // into its own child
      ['[{"op":"replace","path":"/list/0","value":0},{"op":"copy","from":"/nope","path":"/x"}]', 'patch-failed'], // atomic
    ];
    for (const [ops, reason] of cases) {
      const sync = await synced();
      const outcomes = untouched(sync, () => feed(sync, delta(ops)));
      assert.deepEqual(kinds(outcomes), [['resync', reason]], ops);
      assert.match(outcomes[0].detail, /\S/);
      assert.equal(sync.status, 'resyncing');
      sync.dispose();
    }
    // A pointer without its leading slash is not a pointer at all: the patch is malformed.
    const sync = await synced();
    assertRejected(untouched(sync, () => feed(sync, delta('[{"op":"add","path":"no-slash","value":1}]'))),
      'invalid-patch', 'malformed');
    sync.dispose();
  });

  test('a 50 MB SSE line with no newline: nothing dispatched, state untouched, the stream goes on', async () => {
    const sync = await synced();
    const mib = new Uint8Array(1 << 20).fill(0x62);
    untouched(sync, () => {
      for (let i = 0; i < 50; i++) assert.deepEqual(feed(sync, mib), []);
      assert.deepEqual(feed(sync, '\n\n'), []);
    });
    assert.equal(sync.status, 'synced');
    assert.deepEqual(kinds(feed(sync, delta('[{"op":"replace","path":"/proposal/amount","value":11}]'))),
      [['applied', undefined]]);
    assert.equal(sync.state.proposal.amount, 11);
    assertMirrors(sync);
    sync.dispose();
  });

  test('a million tiny chunks: every event applies once, in order', async () => {
    const sync = await synced();
    let stream = '';
    for (let s = 2; stream.length < 1_000_000; s++) {
      stream += `data: {"type":"STATE_DELTA","delta":[{"op":"replace","path":"/proposal/amount","value":${s}}],` +
        `"metadata":{"seq":${s},"baseSeq":${s - 1}}}\n\n`;
    }
    const bytes = encoder.encode(stream);
    assert.ok(bytes.length >= 1_000_000);
    const events = stream.split('\n\n').length - 1;
    let applied = 0;
    let other = 0;
    for (let i = 0; i < bytes.length; i++) {
      for (const o of sync.feed(bytes.subarray(i, i + 1))) {
        if (o.kind === 'applied' && o.seq === applied + 2) applied++;
        else other++;
      }
    }
    assert.equal(other, 0);
    assert.equal(applied, events);
    assert.equal(sync.lastSeq, events + 1);
    assert.equal(sync.state.proposal.amount, sync.lastSeq);
    assert.equal(sync.status, 'synced');
    assertMirrors(sync);
    sync.dispose();
  });
});
