// js/src is layered by role (docs/architecture.md#layers; rules in js-layers.mjs):
// the tree passes, and the checker itself catches each kind of wrong import,
// so a green run means the rule was checked, not that the checker is blind.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { join } from 'node:path';
import { checkModule, checkTree, ENTRIES, importsOf, LAYERS, modulesUnder } from './js-layers.mjs';
import { jsDir } from './support.mjs';

const srcDir = join(jsDir, 'src');

describe('js/src layering', () => {
  test('no import points the wrong way, and the top level holds only entry files and role folders', () => {
    assert.deepEqual(checkTree(srcDir), []);
  });

  test('every role folder holds modules, and every entry file exists', () => {
    const modules = modulesUnder(srcDir);
    for (const folder of Object.keys(LAYERS)) assert.ok(modules.some((m) => m.startsWith(`${folder}/`)), folder);
    for (const entry of ENTRIES) assert.ok(modules.includes(entry), entry);
  });

  test('the reader sees static, re-export, dynamic and bare-side-effect imports', () => {
    const text = [
      "import { a } from './a.js';",
      "export { b } from '../b.js';",
      'import {\n  c,\n  d,\n} from "./c.js";',
      "const m = await import('./m.js');",
      "import './side.js';",
      "// from 'not-an-import'",
    ].join('\n');
    assert.deepEqual(importsOf(text).sort(), ['../b.js', './a.js', './c.js', './m.js', './side.js']);
  });

  describe('the checker refuses each wrong direction', () => {
    const refused = [
      ['client/sync.js', '../server/emitter.js', 'client imports server'],
      ['client/guard.js', '../proxy/run.js', 'client imports proxy'],
      ['client/persist.js', '../server/store/redis-store.js', 'client imports a store'],
      ['engine/loader.js', '../client/sync.js', 'engine imports above it'],
      ['engine/errors.js', '../shared/json-pointer.js', 'engine imports shared'],
      ['shared/state-mirror.js', '../client/guard.js', 'shared imports client'],
      ['server/emitter.js', '../ag-ui/sequence-state.js', 'server imports ag-ui'],
      ['server/catch-up.js', '../server.js', 'a module imports an entry file'],
      ['proxy/thread.js', '../index.js', 'a module imports an entry file'],
      ['client/sync.js', 'node:fs', 'the browser client imports a Node built-in'],
      ['engine/loader.js', 'redis', 'the engine imports a peer'],
    ];
    for (const [file, spec, what] of refused) {
      test(what, () => assert.equal(checkModule(file, [spec]).length, 1, `${file} -> ${spec}`));
    }
    test('a loose module at the top level', () => assert.equal(checkModule('helpers.js', []).length, 1));
    test('a folder that is not a role', () => assert.equal(checkModule('misc/x.js', []).length, 1));
    test('the allowed directions pass', () => {
      assert.deepEqual(checkModule('ag-ui/state-sync-agent.js', ['../client/sync.js', '../server/catch-up.js', 'rxjs']), []);
      assert.deepEqual(checkModule('engine/loader.js', ['../../wasm/agui_sync.mjs', './errors.js']), []);
      assert.deepEqual(checkModule('index.js', ['./client/sync.js', './server/emitter.js']), []);
    });
  });
});
