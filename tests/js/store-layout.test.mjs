// The Redis key layout v2 (issue 38: key spaces), replayed from
// tests/vectors/store_keys.json; tests/python/test_store_layout.py replays the
// same file. Seeded ids: no id of one kind (or one thread) names a key of another.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { claimKey, runBase, runIdKey, threadBase } from '../../js/src/server/store/key-layout.js';
import { repoRoot } from './support.mjs';

const vectors = JSON.parse(readFileSync(join(repoRoot, 'tests', 'vectors', 'store_keys.json'), 'utf8'));
const keyOf = (c) => ({
  thread: () => threadBase(c.prefix, c.id),
  run: () => runBase(c.prefix, c.id),
  runId: () => runIdKey(c.prefix, c.id),
  claim: () => claimKey(c.prefix, c.scope, c.id),
})[c.kind]();

test('every vector gives its key byte for byte', () => {
  assert.ok(vectors.cases.length > 20);
  for (const c of vectors.cases) assert.equal(keyOf(c), c.key, JSON.stringify(c));
});

test('seeded ids: distinct (kind, parts) never share a key, whatever the ids hold', () => {
  let seed = 38;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  const alphabet = ['a', ':', '{', '}', '%', '7', 'D', 'run', 'claim', 't', 'r', 'c', 'i'];
  const word = () => Array.from({ length: next() % 6 }, () => alphabet[next() % alphabet.length]).join('');
  const seen = new Map();
  for (let i = 0; i < 5000; i++) {
    const c = { kind: ['thread', 'run', 'runId', 'claim'][next() % 4], prefix: 'agui:', id: word(), scope: word() };
    if (c.kind !== 'claim') delete c.scope;
    const key = keyOf(c);
    const id = JSON.stringify(c);
    if (seen.has(key)) assert.equal(seen.get(key), id, `${key} names two things`);
    seen.set(key, id);
  }
});
