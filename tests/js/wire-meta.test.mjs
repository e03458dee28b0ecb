// Version 2 of the wire (docs/wire.md section 10): our fields under one key of
// `metadata`. The engine-free reader (js/src/engine/wire-meta.js) must find the
// fields tests/vectors/wire_meta_vectors.json names (the native suite holds the
// C++ reader and the decoder to the same file), and the engine must sequence
// each event where the file's `position` says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pkg, repoRoot, sse } from './support.mjs';

const doc = JSON.parse(readFileSync(join(repoRoot, 'tests', 'vectors', 'wire_meta_vectors.json'), 'utf8'));

test('the key is the package name, from the C++ table', () => {
  assert.equal(pkg.WIRE_KEY, 'agui-state-sync');
});

for (const c of doc.cases) {
  test(`wire metadata vector: ${c.name}`, async () => {
    assert.deepEqual(pkg.wireFields(c.event), c.fields);
    // A fresh engine fed the event as a snapshot at the position's seq shows the engine read that seq.
    if (c.event.type !== 'STATE_SNAPSHOT') return;
    const sync = await pkg.createStateSync();
    try {
      const [outcome] = sync.feed(sse(c.event));
      assert.equal(outcome.kind, 'applied');
      assert.equal(outcome.seq, c.position.seq);
      assert.equal(sync.status, c.position.seq === null ? 'unverified' : 'synced');
    } finally {
      sync.dispose();
    }
  });
}

test('a delta is sequenced where its position says', async () => {
  for (const c of doc.cases.filter((x) => x.event.type === 'STATE_DELTA' && x.position.baseSeq !== null && x.position.digest === null)) {
    const sync = await pkg.createStateSync();
    try {
      const base = { type: 'STATE_SNAPSHOT', snapshot: {}, metadata: { [pkg.WIRE_KEY]: { seq: c.position.baseSeq, epoch: c.position.epoch ?? undefined } } };
      sync.feed(sse(base));
      const [outcome] = sync.feed(sse(c.event));
      assert.deepEqual([outcome.kind, outcome.seq, sync.lastSeq], ['applied', c.position.seq, c.position.seq], c.name);
    } finally {
      sync.dispose();
    }
  }
});

test('the emitter sends its fields under the key and nothing else in metadata', async () => {
  const emitter = await pkg.createStateEmitter({ epoch: 'e', initialState: {}, snapshotRatio: 100 });
  try {
    const [event] = emitter.update({ a: 1 });
    assert.deepEqual(Object.keys(event.metadata), ['agui-state-sync']);
    assert.deepEqual(event.metadata['agui-state-sync'], { seq: 1, baseSeq: 0, epoch: 'e' });
    assert.equal(emitter.encode(event).split('\n')[0], 'id: 1');
  } finally {
    emitter.dispose?.();
  }
});
