// Shared helpers for the JS test suite (not a test file itself).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..');
export const jsDir = join(repoRoot, 'js');

// The package is imported from the source tree (the tarball test covers the
// installed package).
export const pkg = await import(join(jsDir, 'src', 'index.js'));
export const { kInternals } = await import(join(jsDir, 'src', 'engine', 'internals.js'));
export const { applyDelta } = await import(join(jsDir, 'src', 'shared', 'state-mirror.js'));

if (!existsSync(join(jsDir, 'wasm', 'agui_sync.mjs'))) {
  throw new Error(`js/wasm/ is not built (expected ${join(jsDir, 'wasm', 'agui_sync.mjs')}); run \`make wasm\` first`);
}
/** False for an AGUI_WASM_SINGLE_FILE=ON build (the wasm is embedded in the glue). */
export const separateWasm = existsSync(join(jsDir, 'wasm', 'agui_sync.wasm'));

// External test data, none of it in this repository (tests/native/test_support.h
// has the same rules):
//  - the JSON Patch suite comes from the npm devDependency json-patch-test-suite;
//  - the other suites (SSE, RFC 8785, AG-UI apply cases) from the folder named by
//    AGUI_CONFORMANCE_DIR. Unset or missing: those tests are skipped (make test
//    says so in one line), unless AGUI_REQUIRE_CONFORMANCE=1 makes it a failure.
const configuredDir = process.env.AGUI_CONFORMANCE_DIR ? resolve(process.env.AGUI_CONFORMANCE_DIR) : null;
/** The external suites' folder, or null when it is not available. */
export const conformanceDir = configuredDir && existsSync(configuredDir) ? configuredDir : null;
if (!conformanceDir && process.env.AGUI_REQUIRE_CONFORMANCE === '1') {
  throw new Error(`AGUI_REQUIRE_CONFORMANCE=1 but AGUI_CONFORMANCE_DIR (${configuredDir ?? 'unset'}) is not an existing folder`);
}
/** `skip` option for describe()/test() of a suite that reads the external folder. */
export const conformanceSkip = conformanceDir ? false : 'external conformance suites not found (set AGUI_CONFORMANCE_DIR)';

export function readConformance(relative) {
  if (!conformanceDir) throw new Error('AGUI_CONFORMANCE_DIR is not set to an existing folder');
  return JSON.parse(readFileSync(join(conformanceDir, relative), 'utf8'));
}

/** A file of the JSON Patch suite (npm json-patch-test-suite): "tests.json" or "spec_tests.json". */
export function readJsonPatchSuite(file) {
  return JSON.parse(readFileSync(join(repoRoot, 'node_modules', 'json-patch-test-suite', file), 'utf8'));
}

/** One SSE event carrying `event` as its data. */
export function sse(event, { id } = {}) {
  return (id !== undefined ? `id: ${id}\n` : '') + `data: ${JSON.stringify(event)}\n\n`;
}

export const snapshot = (state, seq, extra = {}) => ({
  type: 'STATE_SNAPSHOT',
  snapshot: state,
  ...(seq === undefined ? {} : { metadata: { seq, ...extra } }),
});

export const delta = (ops, seq, baseSeq = seq === undefined ? undefined : seq - 1) => ({
  type: 'STATE_DELTA',
  delta: ops,
  ...(seq === undefined ? {} : { metadata: { seq, baseSeq } }),
});

/** The engine's own serialized state (the source of truth), parsed. */
export function engineState(sync) {
  const { facade } = sync[kInternals]();
  return JSON.parse(facade.stateJson());
}

/** Asserts that the JS mirror equals the C++ engine's state. */
export function assertMirrors(sync, message) {
  assert.deepStrictEqual(plain(sync.state), engineState(sync), message);
}

/** A structural copy with ordinary prototypes, for deepStrictEqual across sources. */
export function plain(value) {
  return JSON.parse(JSON.stringify(value));
}

/** Deterministic PRNG (mulberry32). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
