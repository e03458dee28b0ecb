// Every code block in the docs that is a complete program runs here, so the
// docs cannot rot (issue 41). The convention (CONTRIBUTING.md): the line right
// before the opening fence is the HTML comment <!-- run -->, invisible on
// GitHub. Such a block is a whole program: it imports what it uses, needs no
// server but one it starts itself (127.0.0.1, an ephemeral port), does not
// depend on the clock, and checks its own results (node:assert). It passes
// when it exits 0. ```js blocks run here, with node, importing the package as
// `agui-state-sync`; ```python blocks run in tests/python/test_docs_examples.py.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const MARK = '<!-- run -->';
const LANGS = { js: 'js', javascript: 'js', mjs: 'js', python: 'python', py: 'python' };

/** The Markdown files whose marked blocks run: README.md, CONTRIBUTING.md, js/README.md, docs/**. */
export function docFiles(root = ROOT) {
  const files = ['README.md', 'CONTRIBUTING.md', join('js', 'README.md')];
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  walk('docs');
  return files.filter((f) => { try { readFileSync(join(root, f)); return true; } catch { return false; } });
}

/** The blocks marked as programs in `text`: [{ line, lang, code }] (line: 1-based, of the fence). */
export function markedBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== MARK) continue;
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i + 1] ?? '');
    if (!open) throw new Error(`line ${i + 1}: ${MARK} is not followed by a code fence`);
    const [, indent, fence, info] = open;
    const body = [];
    let j = i + 2;
    for (; j < lines.length && !lines[j].trim().startsWith(fence); j++) body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j]);
    if (j === lines.length) throw new Error(`line ${i + 2}: the fence never closes`);
    blocks.push({ line: i + 2, lang: LANGS[info.toLowerCase()] ?? info, code: `${body.join('\n')}\n` });
    i = j;
  }
  return blocks;
}

const all = docFiles().flatMap((file) => markedBlocks(readFileSync(join(ROOT, file), 'utf8')).map((b) => ({ file, ...b })));
const js = all.filter((b) => b.lang === 'js');

// A scratch project whose node_modules holds the package (js/) and the
// workspace's dependencies, so `import ... from 'agui-state-sync'` resolves
// as it does for a user. Links only: nothing is copied or installed.
const dir = mkdtempSync(join(tmpdir(), 'agui-docs-examples-'));
after(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, 'node_modules'));
symlinkSync(join(ROOT, 'js'), join(dir, 'node_modules', 'agui-state-sync'), 'dir');
for (const name of readdirSync(join(ROOT, 'node_modules'))) {
  if (name.startsWith('.') || name === 'agui-state-sync') continue;
  symlinkSync(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name));
}
writeFileSync(join(dir, 'package.json'), '{"private":true,"type":"module"}\n');

function run(file, cwd) {
  return new Promise((resolve) => {
    execFile(process.execPath, [file], { cwd, timeout: 60000, env: { ...process.env, NODE_OPTIONS: '' } },
      (error, stdout, stderr) => resolve({ code: error ? (error.code ?? error.signal) : 0, stdout, stderr }));
  });
}

describe('docs examples', () => {
  test('every marked block is JavaScript or Python, and there are some of each', () => {
    for (const b of all) assert.ok(b.lang === 'js' || b.lang === 'python', `${b.file}:${b.line}: ${MARK} on a block of '${b.lang}'`);
    assert.ok(js.length >= 3, `only ${js.length} marked JS blocks`);
    assert.ok(all.some((b) => b.lang === 'python'), 'no marked Python block');
  });

  for (const b of js) {
    test(`${b.file}:${b.line}`, { timeout: 90000 }, async () => {
      const file = join(dir, `${b.file.replace(/[^\w]+/g, '_')}_${b.line}.mjs`);
      writeFileSync(file, b.code);
      const { code, stdout, stderr } = await run(file, dir);
      assert.equal(code, 0, `${b.file}:${b.line} exited ${code} (${relative(ROOT, file)})\n${stdout}\n${stderr}`);
    });
  }
});
