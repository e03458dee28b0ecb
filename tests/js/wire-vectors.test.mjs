// The wire conformance vectors (tests/vectors/wire_vectors.json, generated and
// checked by the native suite) replayed through the WASM package: the JS API
// must report the same outcomes, status, lastSeq and state after every step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pkg, repoRoot, assertMirrors } from './support.mjs';

const doc = JSON.parse(readFileSync(join(repoRoot, 'tests', 'vectors', 'wire_vectors.json'), 'utf8'));

function summary(o) {
  const s = { kind: o.kind };
  if (o.kind === 'applied') Object.assign(s, { type: o.type, seq: o.seq, changedPaths: o.changedPaths });
  if (o.kind === 'ignored') Object.assign(s, { reason: o.reason, seq: o.seq });
  if (o.kind === 'resync') Object.assign(s, { reason: o.reason, lastSeq: o.lastSeq });
  if (o.kind === 'error') s.code = o.code;
  if (o.kind === 'event') s.type = o.event.type;
  for (const k of Object.keys(s)) if (s[k] === null && k === 'seq') delete s[k];
  return s;
}

test('the vector file is not empty', () => assert.ok(doc.vectors.length >= 8));

for (const vector of doc.vectors) {
  test(`wire vector: ${vector.name}`, async () => {
    const sync = await pkg.createStateSync();
    try {
      vector.steps.forEach((step, i) => {
        let outcomes = [];
        if ('feed' in step) outcomes = sync.feed(step.feed);
        else if (step.end) outcomes = sync.end();
        else sync.reset();
        const where = `${vector.name} step ${i}`;
        assert.deepEqual(outcomes.map(summary), step.expect.outcomes, where);
        assert.equal(sync.status, step.expect.status, where);
        assert.equal(sync.lastSeq, step.expect.lastSeq, where);
        assert.deepEqual(sync.state, step.expect.state, where);
        assertMirrors(sync, where);
      });
    } finally {
      sync.dispose();
    }
  });
}
