// Strings across the JS/WebAssembly boundary (bindings/wasm/std_string.js: the
// platform's TextEncoder/TextDecoder instead of embind's code-unit loops). Seeded
// states made of every kind of code point (one to four UTF-8 bytes, U+FEFF at the
// start of a string, NUL and other escapes, the last code points of each plane)
// go into an emitter as JSON text, come back out of it (its state, its events'
// text), through a receiver fed that text as a JS string and as bytes, and into
// the guard's digests: every side sees the same strings. A raw string argument
// that is not well formed (a lone surrogate) still gets an answer, never a throw.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pkg } from './support.mjs';

const { createStateEmitter, createStateSync, stateDigest } = pkg;

const POOL = ['a', 'Z', '~', '"', '\\', '/', '\u0000', '\u001f', '\u007f', '\u0080', 'é', '\u07ff', '\u0800',
  '\ufeff', '€', '\uffef', '\ufffd', '\uffff', '\u{10000}', '😀', '\u{10ffff}', ' ', '\n'];

// A small seeded PRNG (mulberry32): each seed is one reproducible case.
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function word(next, max) {
  let s = next() < 0.3 ? '\ufeff' : ''; // a leading BOM: a decoder must not eat it
  const n = Math.floor(next() * max);
  for (let i = 0; i < n; i++) s += POOL[Math.floor(next() * POOL.length)];
  return s;
}

function seededState(seed) {
  const next = prng(seed);
  const state = {};
  const n = 1 + Math.floor(next() * 12);
  for (let i = 0; i < n; i++) {
    const long = next() < 0.2; // some strings long enough that a per-code-unit loop would show
    state[`${word(next, 6)}#${i}`] = next() < 0.3 ? [word(next, 40), { [word(next, 4)]: word(next, 40) }] : word(next, long ? 4000 : 40);
  }
  return state;
}

const sseText = (events) => events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('');

describe('strings across the WebAssembly boundary', () => {
  test('200 seeded states: emitter, events, receiver (text and bytes) and digests agree', async () => {
    const emitter = await createStateEmitter();
    const asText = await createStateSync();
    const asBytes = await createStateSync();
    const first = emitter.snapshot();
    asText.feed(sseText([first]));
    asBytes.feed(new TextEncoder().encode(sseText([first])));
    for (let seed = 1; seed <= 200; seed++) {
      const state = seededState(seed);
      const events = emitter.update(state);
      assert.deepEqual(emitter.state, state, `seed ${seed}: the emitter's state`);
      asText.feed(sseText(events));
      asBytes.feed(new TextEncoder().encode(sseText(events)));
      for (const sync of [asText, asBytes]) {
        assert.equal(sync.status, 'synced', `seed ${seed}`);
        assert.deepEqual(sync.state, state, `seed ${seed}: the receiver's state`);
      }
      const key = Object.keys(state)[0];
      const view = asText.guard.view(`/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
      assert.ok(view.ok, `seed ${seed}: ${view.reason}`);
      assert.deepEqual(view.value, state[key]);
      assert.equal(view.token.digest, stateDigest(state[key]), `seed ${seed}: the guard's digest is the value's`);
    }
    for (const closable of [emitter, asText, asBytes]) closable.dispose();
  });

  test('a raw argument with a lone surrogate gets an answer, not a throw', async () => {
    const sync = await createStateSync();
    sync.feed(`data: ${JSON.stringify({ type: 'STATE_SNAPSHOT', snapshot: { a: 1 }, metadata: { seq: 1 } })}\n\n`);
    for (const path of ['/\ud800', '/a\udc00', '/\udbff\u0041']) {
      const view = sync.guard.view(path);
      assert.equal(view.ok, false);
      assert.equal(view.reason, 'missing');
    }
    assert.equal(sync.guard.view('/a').value, 1);
    sync.dispose();
  });
});
