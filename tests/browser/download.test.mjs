// What a browser downloads (issue 27, item 2): a Vite production build of a
// page that imports createStateSync and connectStateSync from agui-state-sync,
// as an app builds it (the demo's Vite; the package resolved through its
// exports from the demo's node_modules), gzipped at level 9: the JS chunks
// plus the wasm. The budget fails the suite when the build grows past it;
// StateSyncHttpAgent's page is measured and reported beside it.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DEMO = path.join(ROOT, 'demo');
const { build } = await import(createRequire(path.join(DEMO, 'package.json')).resolve('vite'));
// The goal of issue 27: 100 KB, read as 100,000 B. Measured: 23,190 B of JS +
// 76,464 B of wasm = 99,654 B. Growth past it fails.
const BUDGET = 100000;

// Probe pages live under demo/ so that 'agui-state-sync' resolves as in an app.
const probes = mkdtempSync(path.join(DEMO, '.download-probe-'));
const out = mkdtempSync(path.join(tmpdir(), 'agui-download-'));
after(() => {
  rmSync(probes, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
});

function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

/**
 * Builds a page whose module is `source`: { js, wasm, files, unused }, gzipped
 * bytes by kind. A wasm file counts when the page's JS names it: Vite also
 * emits the server engine's (its glue's `new URL(...)` is seen before the
 * chunk that holds it is tree-shaken away), which no page ever fetches.
 */
async function download(name, source) {
  const root = path.join(probes, name);
  mkdirSync(root);
  writeFileSync(path.join(root, 'index.html'), '<!doctype html><script type="module" src="./main.js"></script>\n');
  writeFileSync(path.join(root, 'main.js'), source);
  const outDir = path.join(out, name);
  await build({ root, logLevel: 'silent', configFile: false, build: { outDir, target: 'es2022', emptyOutDir: true } });
  const files = filesUnder(outDir);
  const scripts = files.filter((f) => f.endsWith('.js'));
  const code = scripts.map((f) => readFileSync(f, 'utf8')).join('\n');
  const sizes = { js: 0, wasm: 0, files: [], unused: [] };
  for (const file of [...scripts, ...files.filter((f) => f.endsWith('.wasm'))]) {
    const name = path.basename(file);
    const kind = name.endsWith('.wasm') ? 'wasm' : 'js';
    if (kind === 'wasm' && !code.includes(name)) {
      sizes.unused.push(name);
      continue;
    }
    const bytes = gzipSync(readFileSync(file), { level: 9 }).length;
    sizes[kind] += bytes;
    sizes.files.push(`${name} ${bytes}`);
  }
  return sizes;
}

test('a page with createStateSync + connectStateSync downloads at most the budget, gzipped', { timeout: 300000 }, async (t) => {
  const page = await download('sync', `import { createStateSync, connectStateSync } from 'agui-state-sync';
const sync = await createStateSync();
globalThis.stop = connectStateSync(sync, { url: '/agent' });
`);
  t.diagnostic(`createStateSync + connectStateSync: ${page.js} B JS + ${page.wasm} B wasm = ${page.js + page.wasm} B gzipped (${page.files.join(', ')})`);
  assert.ok(page.wasm > 0, 'the engine is in the build');
  assert.ok(!page.files.some((f) => f.startsWith('agui_emitter')), `the server engine is not fetched: ${page.files}`);
  assert.ok(page.js + page.wasm <= BUDGET, `${page.js + page.wasm} B gzipped, budget ${BUDGET}`);
});

test("StateSyncHttpAgent's page (reported: it carries @ag-ui/client too)", { timeout: 300000 }, async (t) => {
  const page = await download('agent', `import { StateSyncHttpAgent } from 'agui-state-sync/ag-ui';
globalThis.agent = new StateSyncHttpAgent({ url: '/agent' });
`);
  t.diagnostic(`StateSyncHttpAgent: ${page.js} B JS + ${page.wasm} B wasm = ${page.js + page.wasm} B gzipped (${page.files.join(', ')})`);
  assert.ok(page.wasm > 0 && !page.files.some((f) => f.startsWith('agui_emitter')), page.files.join(', '));
});
