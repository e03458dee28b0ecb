#!/usr/bin/env node
// Writes docs/api/js.md, the npm package's API reference, from the type
// declarations in js/types/*.d.ts and their doc comments. It parses them with
// the TypeScript compiler the workspace already has (a devDependency).
//
//   node tools/gen_api_ref.mjs          write docs/api/js.md
//   node tools/gen_api_ref.mjs --check  exit 1 if docs/api/js.md is not current
//
// tests/js/docs-api-ref.test.mjs runs generate() and compares it with the file.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const OUTPUT = join('docs', 'api', 'js.md');

// One section per entry point, in the order a reader meets them.
const MODULES = [
  ['index.d.ts', 'agui-state-sync', 'The main entry: the receiver (createStateSync), the sender (createStateEmitter), digests, prompt rendering, errors.'],
  ['server.d.ts', 'agui-state-sync/server', 'Server helpers: catch-ups, heartbeats, stores, approvals once.'],
  ['ag-ui.d.ts', 'agui-state-sync/ag-ui', '`@ag-ui/client` integration: StateSyncHttpAgent and the sequenceState() middleware.'],
  ['proxy.d.ts', 'agui-state-sync/proxy', 'The sequencing proxy (docs/proxy.md).'],
  ['log.d.ts', 'agui-state-sync/log', 'Thread logs: JSON Lines, compaction, time travel.'],
  ['react.d.ts', 'agui-state-sync/react', 'React hooks.'],
  ['codes.d.ts', 'codes (generated from the C++ table)', 'The code unions, re-exported by the main entry (docs/codes.md).'],
];

const squash = (text) => text.replace(/\s+/g, ' ').trim();

/** The text of the /** ... *\/ comments right before `node`, as Markdown paragraphs. */
function docOf(node, source) {
  const ranges = ts.getLeadingCommentRanges(source.text, node.pos) ?? [];
  const docs = ranges
    .map((r) => source.text.slice(r.pos, r.end))
    .filter((c) => c.startsWith('/**'))
    .map((c) => c.slice(3, -2).split('\n').map((line) => line.replace(/^\s*\* ?/, '')).join('\n').trim());
  return docs.join('\n\n').replace(/\n(?!\n)/g, ' ').replace(/ +/g, ' ').trim();
}

const isExported = (node) => (ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Export) !== 0;

function nameOf(node) {
  if (ts.isVariableStatement(node)) return node.declarationList.declarations.map((d) => d.name.getText()).join(', ');
  return node.name ? node.name.getText() : '(default)';
}

function kindOf(node) {
  if (ts.isFunctionDeclaration(node)) return 'function';
  if (ts.isClassDeclaration(node)) return 'class';
  if (ts.isInterfaceDeclaration(node)) return 'interface';
  if (ts.isTypeAliasDeclaration(node)) return 'type';
  if (ts.isVariableStatement(node)) return 'const';
  if (ts.isEnumDeclaration(node)) return 'enum';
  return 'declaration';
}

/** The declaration's head: a class or interface without its body, anything else whole. */
function headOf(node, source) {
  const body = ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node);
  const text = body ? source.text.slice(node.getStart(source), node.members.pos - 1) : node.getText(source);
  return text.replace(/^export\s+(declare\s+)?/, '').trim();
}

function membersOf(node, source) {
  if (!(ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node))) return [];
  return node.members.map((m) => ({ sig: squash(m.getText(source)).replace(/;$/, ''), doc: docOf(m, source) }));
}

function renderModule([file, title, blurb]) {
  const path = join(ROOT, 'js', 'types', file);
  const source = ts.createSourceFile(file, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const out = [`## ${title}`, '', `${blurb} Declared in \`js/types/${file}\`.`, ''];
  const reexports = [];
  const entries = [];
  for (const node of source.statements) {
    if (ts.isExportDeclaration(node)) {
      const names = node.exportClause && ts.isNamedExports(node.exportClause)
        ? node.exportClause.elements.map((e) => e.name.getText(source)) : ['*'];
      const from = node.moduleSpecifier ? node.moduleSpecifier.text : null;
      reexports.push(`${names.map((n) => `\`${n}\``).join(', ')}${from ? ` (from \`${from}\`)` : ''}`);
      continue;
    }
    if (ts.isImportDeclaration(node) || !isExported(node)) continue;
    const name = nameOf(node);
    const last = entries[entries.length - 1];
    // Overloads: one entry, every signature.
    if (last && last.name === name && ts.isFunctionDeclaration(node) && last.kind === 'function') {
      last.heads.push(headOf(node, source));
      if (!last.doc) last.doc = docOf(node, source);
      continue;
    }
    entries.push({ name, kind: kindOf(node), doc: docOf(node, source), heads: [headOf(node, source)], members: membersOf(node, source) });
  }
  if (reexports.length) out.push(`Re-exported here: ${reexports.join('; ')}.`, '');
  for (const e of entries) {
    out.push(`### \`${e.name}\` (${e.kind})`, '');
    if (e.doc) out.push(e.doc, '');
    out.push('```ts', ...e.heads, '```', '');
    for (const m of e.members) out.push(`- \`${m.sig.replace(/`/g, "'")}\`${m.doc ? `: ${m.doc}` : ''}`);
    if (e.members.length) out.push('');
  }
  return out.join('\n');
}

/** The whole reference, as the file holds it. */
export function generate() {
  const head = [
    '# JavaScript API reference',
    '',
    '<!-- Generated by tools/gen_api_ref.mjs from js/types/*.d.ts: do not edit. -->',
    'Generated from the type declarations in `js/types/` and their doc comments',
    '(`node tools/gen_api_ref.mjs` rewrites it; `tests/js/docs-api-ref.test.mjs`',
    'fails when it is out of date). The guide is [js/README.md](../../js/README.md).',
    '',
    MODULES.map(([, title]) => `- ${title}`).join('\n'),
    '',
  ].join('\n');
  return `${head}\n${MODULES.map(renderModule).join('\n')}`.replace(/\n+$/, '\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = join(ROOT, OUTPUT);
  const text = generate();
  if (process.argv.includes('--check')) {
    let current = '';
    try { current = readFileSync(file, 'utf8'); } catch { /* missing: not current */ }
    if (current !== text) {
      console.error(`${OUTPUT} is out of date: run node tools/gen_api_ref.mjs`);
      process.exit(1);
    }
  } else {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    console.log(`wrote ${OUTPUT} (${text.split('\n').length - 1} lines)`);
  }
}
