// docs/api/js.md is generated from js/types/*.d.ts (tools/gen_api_ref.mjs):
// regenerated in memory here, it must equal the file, so the reference never
// drifts from the types. After changing the types: node tools/gen_api_ref.mjs
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { OUTPUT, generate } from '../../tools/gen_api_ref.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('docs/api/js.md is what tools/gen_api_ref.mjs generates from js/types', () => {
  const current = readFileSync(join(ROOT, OUTPUT), 'utf8');
  const fresh = generate();
  if (current === fresh) return;
  const a = current.split('\n');
  const b = fresh.split('\n');
  const line = a.findIndex((l, i) => l !== b[i]);
  assert.fail(`${OUTPUT} is out of date at line ${line + 1} (file: ${JSON.stringify(a[line])}, types: ${JSON.stringify(b[line])}); run node tools/gen_api_ref.mjs`);
});

test('every export of every entry point is in the reference', () => {
  const text = generate();
  for (const name of ['createStateSync', 'createStateEmitter', 'connectStateSync', 'StateSyncHttpAgent', 'sequenceState', 'createStateSyncProxy', 'compactEvents', 'useAgentState', 'writeCatchUp', 'AguiSyncError']) {
    assert.ok(text.includes(`### \`${name}\``), `${name} is missing`);
  }
});
