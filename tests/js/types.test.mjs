// The hand-written .d.ts files compile against a usage file (tsc --noEmit).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { here, repoRoot } from './support.mjs';

test('tsc --noEmit accepts tests/js/types-usage.ts (and its @ts-expect-error misuse)', () => {
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  assert.ok(existsSync(tsc), `TypeScript is not installed (${tsc}); run \`make npm-deps\``);
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '-p', join(here, 'tsconfig.json')], { encoding: 'utf8' });
  assert.equal(r.status, 0, `tsc failed:\n${r.stdout}${r.stderr}`);
});
