// canonicalJson / stateDigest / verifyApproval / initEngine: RFC 8785 through
// the C++ core, checked against the JCS vectors in the shared conformance
// folder, against an independent SHA-256 (node:crypto), and a FIPS 180 value.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, describe, test } from 'node:test';
import { conformanceDir, conformanceSkip, jsDir, pkg, rng } from './support.mjs';

const { canonicalJson, createStateEmitter, initEngine, stateDigest, verifyApproval } = pkg;
const sha256 = (text) => 'sha256:' + createHash('sha256').update(text, 'utf8').digest('hex');

before(() => initEngine());

describe('initEngine', () => {
  test('the helpers throw a clear Error until an engine is loaded (fresh realm)', () => {
    const entry = pathToFileURL(join(jsDir, 'src', 'index.js')).href;
    const script = `
      const p = await import(${JSON.stringify(entry)});
      const messages = [];
      for (const call of [() => p.canonicalJson({}), () => p.stateDigest(1), () => p.verifyApproval({}, {})]) {
        try { call(); messages.push('no error'); } catch (e) { messages.push(e.constructor.name + ': ' + e.message); }
      }
      await p.initEngine();
      await p.initEngine(); // idempotent
      messages.push(p.canonicalJson({ b: 1, a: 2 }));
      console.log(JSON.stringify(messages));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const expected = 'AguiSyncError: agui-state-sync: call await initEngine() (or create a StateSync/StateEmitter) first';
    assert.deepEqual(JSON.parse(r.stdout), [expected, expected, expected, '{"a":2,"b":1}']);
  });

  test('creating a StateEmitter (the sender module) also makes the helpers usable', () => {
    const entry = pathToFileURL(join(jsDir, 'src', 'index.js')).href;
    const script = `
      const p = await import(${JSON.stringify(entry)});
      const emitter = await p.createStateEmitter({ initialState: { n: 1 } });
      console.log(JSON.stringify([p.stateDigest(emitter.state), p.verifyApproval({ path: '/n', digest: p.stateDigest(1) }, emitter.state)]));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), [sha256('{"n":1}'), true]);
  });

  test('options are checked; the engine is shared with createStateSync', async () => {
    await assert.rejects(initEngine('x'), TypeError);
    await assert.rejects(initEngine({ wasmBinary: 'nope' }), /wasmBinary/);
    await assert.rejects(initEngine({ bogus: 1 }), /unknown initEngine\(\) option/);
    const { loadEngine } = await import(join(jsDir, 'src', 'engine', 'loader.js'));
    assert.equal(loadEngine(), loadEngine(), 'one cached engine');
  });
});

describe('canonicalJson against the RFC 8785 vectors (conformance/jcs)', { skip: conformanceSkip }, () => {
  if (!conformanceDir) return;
  const inputs = readdirSync(join(conformanceDir, 'jcs', 'input')).filter((f) => f.endsWith('.json'));
  test('the vector set is there', () => assert.ok(inputs.length >= 6, inputs.join()));
  for (const name of inputs) {
    test(`input/${name} -> output/${name}, byte-exact`, () => {
      const value = JSON.parse(readFileSync(join(conformanceDir, 'jcs', 'input', name), 'utf8'));
      const expected = readFileSync(join(conformanceDir, 'jcs', 'output', name));
      const canonical = canonicalJson(value);
      assert.equal(Buffer.compare(Buffer.from(canonical, 'utf8'), expected), 0, `${canonical}\n!=\n${expected}`);
      assert.equal(stateDigest(value), sha256(expected.toString('utf8')));
    });
  }

  test('numbers.csv: all 25,000 doubles as one array, and a seeded sample one by one', () => {
    const lines = readFileSync(join(conformanceDir, 'jcs', 'numbers.csv'), 'utf8').trim().split('\n');
    assert.ok(lines.length >= 25000);
    const view = new DataView(new ArrayBuffer(8));
    const numbers = [];
    const texts = [];
    for (const line of lines) {
      const [bits, text] = line.split(',');
      view.setBigUint64(0, BigInt('0x' + bits));
      numbers.push(view.getFloat64(0));
      texts.push(text);
    }
    assert.equal(canonicalJson(numbers), '[' + texts.join(',') + ']');
    const r = rng(8785);
    for (let i = 0; i < 500; i++) {
      const k = Math.floor(r() * numbers.length);
      assert.equal(canonicalJson(numbers[k]), texts[k], lines[k]);
      assert.equal(canonicalJson({ n: numbers[k] }), `{"n":${texts[k]}}`);
    }
  });
});

describe('canonicalJson / stateDigest', () => {
  test('the docs/wire.md example', () => {
    assert.equal(canonicalJson({ b: 1.0, a: [1e21, 'é'] }), '{"a":[1e+21,"é"],"b":1}');
  });

  test('known SHA-256 values of canonical texts ("123", "{}") and node:crypto agree', () => {
    assert.equal(stateDigest(123), 'sha256:a665a45920422f9d417e4867efdc4fb8a04a1f3fff1fa07e998e86f7f7a27ae3');
    assert.equal(stateDigest('abc'), sha256('"abc"'));
    assert.equal(stateDigest({}), 'sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
  });

  test('key order, -0, nested undefined, toJSON, keys that look special', () => {
    const value = { z: [undefined, -0], y: undefined, a: new Date(0), '__proto__': 1 };
    Object.defineProperty(value, '__proto__', { value: 1, enumerable: true, configurable: true, writable: true });
    assert.equal(canonicalJson(value), '{"__proto__":1,"a":"1970-01-01T00:00:00.000Z","z":[null,0]}');
    assert.equal(canonicalJson({ '\u20ac': 1, '\r': 2, 'ö': 3, '\ud83d\ude00': 4 }), '{"\\r":2,"ö":3,"€":1,"😀":4}');
    assert.equal(stateDigest({ b: 2, a: 1 }), stateDigest({ a: 1, b: 2 }));
  });

  test('what JSON cannot represent is a TypeError', () => {
    for (const bad of [undefined, () => 1, Symbol('s'), 1n, NaN, Infinity, { a: NaN }, [1, -Infinity], { f() {} }, { b: 2n }]) {
      assert.throws(() => canonicalJson(bad), TypeError, String(typeof bad));
      assert.throws(() => stateDigest(bad), TypeError);
    }
    const cyclic = {};
    cyclic.self = cyclic;
    assert.throws(() => canonicalJson(cyclic), TypeError);
    assert.throws(() => canonicalJson({ s: 'lone \ud800 surrogate' }), TypeError);
    assert.throws(() => canonicalJson({ a: NaN }), /canonicalJson: JSON cannot represent NaN \(under key "a"\)/);
  });

  test('nesting deeper than 128 levels is an Error', () => {
    let deep = 1;
    for (let i = 0; i < 200; i++) deep = [deep];
    assert.throws(() => canonicalJson(deep), /deeper/);
  });
});

describe('verifyApproval', () => {
  const state = { proposal: { amount: 100, to: 'acme' }, list: [1, { x: 2 }], 'a/b': { '~': true } };

  test('true exactly when the agent holds the approved value', () => {
    assert.equal(verifyApproval({ path: '/proposal', digest: stateDigest(state.proposal) }, state), true);
    assert.equal(verifyApproval({ path: '/list/1', digest: stateDigest({ x: 2 }), seq: 3, epoch: 'e' }, state), true);
    assert.equal(verifyApproval({ path: '/a~1b/~0', digest: stateDigest(true) }, state), true);
    assert.equal(verifyApproval({ path: '', digest: stateDigest(state) }, state), true);
    assert.equal(verifyApproval({ path: '/proposal', digest: stateDigest({ amount: 101, to: 'acme' }) }, state), false);
    assert.equal(verifyApproval({ path: '/missing', digest: stateDigest(null) }, state), false);
  });

  test('malformed input is false, never an exception', () => {
    const digest = stateDigest(state.proposal);
    const hostile = {};
    Object.defineProperty(hostile, 'path', { get() { throw new Error('boom'); } });
    for (const [approval, agentState] of [
      [null, state], [undefined, state], ['approval', state], [{}, state], [{ path: '/proposal' }, state],
      [{ path: 1, digest }, state], [{ path: '/proposal', digest: 5 }, state], [{ path: 'proposal', digest }, state],
      [{ path: '/proposal', digest: '' }, state], [{ path: '/proposal', digest }, undefined],
      [{ path: '/proposal', digest }, { big: 1n }], [hostile, state], [{ path: '/proposal', digest }, () => 1],
    ]) {
      assert.equal(verifyApproval(approval, agentState), false, JSON.stringify(String(approval)));
    }
    let deep = {};
    for (let i = 0; i < 1000; i++) deep = { d: deep };
    assert.equal(verifyApproval({ path: '/d', digest }, deep), false);
  });

  test('an approval made by the guard verifies against the emitter that sent the state', async () => {
    const emitter = await createStateEmitter({ initialState: state });
    const sync = await pkg.createStateSync({ now: () => 0 });
    sync.feed(emitter.encode(emitter.snapshot()));
    const { token } = sync.guard.view('/proposal');
    const { approval } = sync.guard.approve(token);
    assert.equal(verifyApproval(approval, emitter.state), true);
    emitter.update({ ...state, proposal: { amount: 999, to: 'acme' } });
    assert.equal(verifyApproval(approval, emitter.state), false, 'the agent changed it since');
    sync.dispose();
    emitter.dispose();
  });
});
