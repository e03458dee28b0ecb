// Numbers that Clinger's fast path cannot read (more than 15 significant
// digits, or a power of ten past 22) are parsed in the browser engine by the
// platform's Number() (bindings/wasm/parse_decimal.js) instead of musl's
// strtod. Seeded texts of every such shape must come out of the engine as the
// very doubles JSON.parse reads from the same text, and a `test` op written
// with one of them must hold against the state that carries it, and fail
// against the neighbouring double.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { delta, engineState, pkg, rng, snapshot, sse } from './support.mjs';

const { createStateSync } = pkg;

// Decimal texts: long mantissas, extreme exponents, subnormals, overflow to
// Infinity (which the engine must treat as JSON.parse does), integers past 2^53.
function decimalText(next) {
  const digits = (n) => Array.from({ length: n }, () => Math.floor(next() * 10)).join('');
  const lead = () => String(1 + Math.floor(next() * 9)); // JSON has no leading zeros
  const sign = next() < 0.3 ? '-' : '';
  switch (Math.floor(next() * 7)) {
    case 0: return sign + String(next() * 10 ** Math.floor(next() * 40 - 20)); // shortest round trip, up to 17 digits
    case 1: return `${sign}${lead()}.${digits(16 + Math.floor(next() * 30))}`;
    case 2: return `${sign}${lead()}${digits(Math.floor(next() * 3))}e${Math.floor(next() * 700) - 350}`;
    case 3: return `${sign}${lead()}${digits(16)}e-${300 + Math.floor(next() * 30)}`; // subnormals and underflow
    case 4: return `${sign}9007199254740993.${digits(3)}`; // between doubles past 2^53
    case 5: return `${sign}0.${'0'.repeat(Math.floor(next() * 10))}${digits(20)}`;
    default: return `${sign}${lead()}.${digits(2)}e${Math.floor(next() * 60) - 30}`;
  }
}

test('long decimals come out of the engine as the doubles JSON.parse reads', async () => {
  for (let seed = 1; seed <= 25; seed++) {
    const next = rng(seed);
    const texts = Array.from({ length: 40 }, () => decimalText(next)).filter((t) => Number.isFinite(Number(t)));
    const text = `{"values":[${texts.join(',')}]}`;
    const sync = await createStateSync();
    try {
      const [outcome] = sync.feed(`data: {"type":"STATE_SNAPSHOT","snapshot":${text},"metadata":{"seq":1}}\n\n`);
      assert.equal(outcome.kind, 'applied', `seed ${seed}: ${JSON.stringify(outcome)}`);
      const expected = JSON.parse(text).values;
      const inEngine = engineState(sync).values;
      for (let i = 0; i < expected.length; i++) {
        assert.ok(Object.is(inEngine[i], expected[i]), `seed ${seed}: ${texts[i]} read as ${inEngine[i]}, JSON.parse gives ${expected[i]}`);
      }
      // A test op carrying the same text holds; one carrying the next double up fails and changes nothing.
      const i = Math.floor(next() * expected.length);
      const [held] = sync.feed(`data: ${JSON.stringify(delta([{ op: 'test', path: `/values/${i}`, value: 0 }], 2)).replace('"value":0', `"value":${texts[i]}`)}\n\n`);
      assert.equal(held.kind, 'applied', `seed ${seed}: test of ${texts[i]}: ${JSON.stringify(held)}`);
      const neighbour = expected[i] === 0 ? Number.MIN_VALUE : expected[i] * (1 + Number.EPSILON);
      if (neighbour !== expected[i] && Number.isFinite(neighbour)) {
        const [refused] = sync.feed(sse(delta([{ op: 'test', path: `/values/${i}`, value: neighbour }], 3)));
        assert.notEqual(refused.kind, 'applied', `seed ${seed}: ${neighbour} is not ${texts[i]}`);
      }
      assert.deepEqual(engineState(sync).values.map(String), expected.map(String));
    } finally {
      sync.dispose?.();
    }
  }
});

test('a decimal past the double range is refused as strtod refuses it, and the state stays as it was', async () => {
  for (const text of ['1e400', '-1e400', '179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792']) {
    const sync = await createStateSync();
    const before = sync.feed(sse(snapshot({ ok: 1 }, 1)));
    assert.equal(before[0].kind, 'applied');
    const outcomes = sync.feed(`data: {"type":"STATE_DELTA","delta":[{"op":"replace","path":"/ok","value":${text}}],"metadata":{"seq":2,"baseSeq":1}}\n\n`);
    assert.deepEqual(outcomes.map((o) => o.kind), ['error', 'resync'], text);
    assert.equal(outcomes[0].code, 'invalid-json');
    assert.match(outcomes[0].message, /number out of double range/);
    assert.deepEqual(engineState(sync), { ok: 1 });
    assert.deepEqual(sync.state, { ok: 1 });
  }
});
