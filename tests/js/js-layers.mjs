// The layering rule of js/src (docs/architecture.md#layers), as data and a checker:
// the JS twin of cmake/check_layers.cmake. Each role folder may import from
// the folders listed for it and nothing else, and no module inside a folder
// imports an entry file (the package's public surface points inward only).
// Bare imports are listed per folder too, so a browser bundle of the client
// (client/ + shared/ + engine/) provably pulls in no Node built-in and no peer.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** Folder -> the folders its modules may import from (itself included). */
export const LAYERS = {
  engine: ['engine'], // loading, the link into WASM, options, errors, codes
  shared: ['engine', 'shared'], // pure JS both halves use: pointers, the mirror, resync headers, edit policy
  client: ['engine', 'shared', 'client'], // StateSync, guard, pending edits, reconnect, persistence
  server: ['engine', 'shared', 'server'], // emitter, catch-up, approvals, edits judged, prompts, stores
  'ag-ui': ['engine', 'shared', 'client', 'server', 'ag-ui'], // @ag-ui/client: the agent and the middleware
  proxy: ['engine', 'shared', 'client', 'server', 'proxy'], // the sequencing proxy
  log: ['engine', 'shared', 'client', 'log'], // logs: compaction, equivalence, time travel
};

/** Folder -> the bare specifiers (packages, node: built-ins) its modules may import. */
export const PACKAGES = {
  engine: [],
  shared: [],
  client: [],
  server: ['redis', 'node:fs/promises'],
  'ag-ui': ['@ag-ui/client', 'rxjs'],
  proxy: ['node:crypto', 'node:http', 'node:https', 'prom-client'],
  log: [],
};

/** The package's entry files, the only modules at js/src's top level. */
export const ENTRIES = ['index.js', 'react.js', 'server.js', 'ag-ui.js', 'proxy.js', 'log.js'];

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;

/** Every static, re-export and literal dynamic import specifier in `text`. */
export function importsOf(text) {
  const out = [];
  for (const m of text.matchAll(IMPORT)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/**
 * The violations of one module: `file` is its path relative to js/src
 * ('client/sync.js'), `specifiers` what it imports. Returns strings that name
 * the file, the import and the rule it breaks.
 */
export function checkModule(file, specifiers) {
  const parts = file.split('/');
  if (parts.length === 1) {
    return ENTRIES.includes(file) ? [] : [`${file}: only entry files (${ENTRIES.join(', ')}) may sit at js/src's top level`];
  }
  const folder = parts[0];
  if (!(folder in LAYERS)) return [`${file}: ${folder}/ is not a role folder (${Object.keys(LAYERS).join(', ')})`];
  const problems = [];
  for (const spec of specifiers) {
    if (!spec.startsWith('.')) {
      if (!PACKAGES[folder].includes(spec)) problems.push(`${file}: imports '${spec}', which ${folder}/ may not (allowed: ${PACKAGES[folder].join(', ') || 'none'})`);
      continue;
    }
    const target = join(dirname(file), spec).split(sep).join('/');
    if (target.startsWith('../')) continue; // the built engine in js/wasm/
    const targetParts = target.split('/');
    if (targetParts.length === 1) {
      problems.push(`${file}: imports the entry file ${target}; entries point inward, never back`);
    } else if (!LAYERS[folder].includes(targetParts[0])) {
      problems.push(`${file}: imports ${target}, but ${folder}/ may import only from ${LAYERS[folder].join(', ')}`);
    }
  }
  return problems;
}

/** Every .js module under `srcDir`, relative to it with '/' separators. */
export function modulesUnder(srcDir) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.js')) out.push(relative(srcDir, path).split(sep).join('/'));
    }
  };
  walk(srcDir);
  return out;
}

/** All violations in the tree at `srcDir` (js/src), [] when it is layered. */
export function checkTree(srcDir) {
  const problems = [];
  for (const file of modulesUnder(srcDir)) {
    problems.push(...checkModule(file, importsOf(readFileSync(resolve(srcDir, file), 'utf8'))));
  }
  for (const name of readdirSync(srcDir)) {
    if (statSync(join(srcDir, name)).isDirectory() && !(name in LAYERS)) problems.push(`${name}/: not a role folder`);
  }
  return problems;
}
