// A user's TypeScript program (tests/types/sample_user.ts, the twin of
// tests/types/sample_user.py) compiles with `tsc --noEmit --strict` against the
// package's declarations (js/types/*.d.ts) with no error (issue 41, "Typed APIs").
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from './support.mjs';

test('tsc --noEmit --strict accepts tests/types/sample_user.ts', () => {
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  assert.ok(existsSync(tsc), `TypeScript is not installed (${tsc}); run \`make npm-deps\``);
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '-p', join(repoRoot, 'tests', 'types', 'tsconfig.json')],
    { encoding: 'utf8' });
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
  assert.equal(r.stdout + r.stderr, '');
});
