// CSP readiness: no eval / new Function anywhere in the package, checked by
// running it under `node --disallow-code-generation-from-strings` (the Node
// stand-in for `script-src 'self' 'wasm-unsafe-eval'`) and by scanning the files.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { jsDir } from './support.mjs';

test('loads and applies a stream with code generation from strings disallowed', () => {
  const entry = pathToFileURL(join(jsDir, 'src', 'index.js')).href;
  const script = `
    let blocked = false;
    try { new Function('return 1')(); } catch (e) { blocked = e instanceof EvalError; }
    if (!blocked) throw new Error('code generation was not disallowed');
    const { createStateSync } = await import(${JSON.stringify(entry)});
    const sync = await createStateSync({ initialState: { n: 0 } });
    const out = sync.feed('data: {"type":"STATE_SNAPSHOT","snapshot":{"n":1,"l":[]},"metadata":{"seq":1}}\\n\\n' +
      'data: {"type":"STATE_DELTA","delta":[{"op":"add","path":"/l/-","value":"x"}],"metadata":{"seq":2,"baseSeq":1}}\\n\\n');
    sync.metrics(); sync.end(); sync.reset();
    const { createStateEmitter, stateDigest } = await import(${JSON.stringify(entry)});
    const emitter = await createStateEmitter({ initialState: sync.state });
    emitter.update({ n: 2, l: ['x'] });
    sync.guard.view('/n');
    console.log(JSON.stringify({ kinds: out.map((o) => o.kind), state: sync.state, status: sync.status,
      emitted: emitter.state, digest: stateDigest(1) }));
    sync.dispose();
  `;
  const r = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    kinds: ['applied', 'applied'], state: { n: 1, l: ['x'] }, status: 'synced', emitted: { n: 2, l: ['x'] },
    digest: 'sha256:6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b',
  });
});

test('no eval or new Function in the package sources or the Emscripten glue', () => {
  const files = [
    ...readdirSync(join(jsDir, 'src'), { recursive: true }).filter((f) => f.endsWith('.js')).map((f) => join(jsDir, 'src', f)),
    join(jsDir, 'wasm', 'agui_sync.mjs'),
    join(jsDir, 'wasm', 'agui_emitter.mjs'),
  ];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    assert.doesNotMatch(text, /new Function\s*\(|\beval\s*\(/, file);
  }
});
