// The code table (js/src/engine/codes.js and js/types/codes.d.ts, generated from the
// C++ include/agui_sync/codes.h) and the JS agree: every code or reason the JS
// sources spell out is in the table's list for its category, the public types
// come from the generated ones, and what the engine reports in induced failures
// is listed too.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { describe, test } from 'node:test';
import ts from 'typescript';
import { jsDir, kInternals, pkg, sse, snapshot, delta } from './support.mjs';

const codes = await import(join(jsDir, 'src', 'engine', 'codes.js'));
const { ERROR_CODES, GUARD_REASONS, EDIT_REASONS, IGNORED_REASONS, RESYNC_REASONS, SNAPSHOT_REASONS, REPLAY_REASONS, ALL_CODES } = codes;
const REASONS = new Set([...RESYNC_REASONS, ...IGNORED_REASONS, ...GUARD_REASONS, ...EDIT_REASONS]);
const srcDir = join(jsDir, 'src');
// Every module under js/src, sub-folders included (client/*.js, proxy/*.js, ...), as paths relative to it.
const sources = readdirSync(srcDir, { recursive: true })
  .map((f) => f.split(sep).join('/'))
  .filter((f) => f.endsWith('.js') && f !== 'engine/codes.js');

// Calls whose argument at `index` is an error code.
const CODE_ARGUMENTS = { syncError: 0, syncTypeError: 0, failureError: 1, failureCode: 1, refusal: 2, jsonText: 2 };

function stringValue(node) {
  return node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : null;
}

function calleeName(call) {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return null;
}

const isAccessOf = (node, name) => ts.isPropertyAccessExpression(node) && node.name.text === name;

// Every spelled-out code in `file`: [{ kind: 'error' | 'reason', value, where }], plus
// the calls of the error factories whose code is not a literal.
function scan(file) {
  const text = readFileSync(join(srcDir, file), 'utf8');
  const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const found = [];
  const computed = [];
  const messageChecks = [];
  const where = (node) => `${file}:${sourceFile.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const add = (kind, node) => {
    const value = stringValue(node);
    if (value !== null) found.push({ kind, value, where: where(node) });
    return value !== null;
  };
  const visit = (node) => {
    if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name)) {
      if (node.name.text === 'code') add('error', node.initializer);
      if (node.name.text === 'reason') add('reason', node.initializer);
    }
    if (ts.isParameter(node) && ts.isIdentifier(node.name) && node.name.text === 'code' && node.initializer) {
      add('error', node.initializer);
    }
    if (ts.isBinaryExpression(node) && [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken].includes(node.operatorToken.kind)) {
      for (const [a, b] of [[node.left, node.right], [node.right, node.left]]) {
        // (a Node system error's code, such as 'ENOENT', is not ours)
        if (isAccessOf(a, 'code') && !/^E[A-Z]+$/.test(stringValue(b) ?? '')) add('error', b);
        if (isAccessOf(a, 'reason')) add('reason', b);
        if (isAccessOf(a, 'message') || (ts.isIdentifier(b) && /MESSAGE/.test(b.text))) messageChecks.push(where(node));
      }
    }
    if (ts.isCallExpression(node)) {
      const name = calleeName(node);
      const index = CODE_ARGUMENTS[name];
      if (index !== undefined && node.arguments.length > index && !add('error', node.arguments[index])) {
        computed.push(`${where(node)} ${name}(... ${node.arguments[index].getText()} ...)`);
      }
      // Message text is for humans: no RegExp or string test of an error's message.
      if (['test', 'exec', 'match', 'startsWith', 'endsWith', 'includes'].includes(name)) {
        const subjects = [node.expression.expression, ...node.arguments];
        if (subjects.some((s) => s && (isAccessOf(s, 'message') || isAccessOf(s, 'error')))) messageChecks.push(where(node));
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return { found, computed, messageChecks };
}

const scans = Object.fromEntries(sources.map((file) => [file, scan(file)]));

describe('the code table', () => {
  test('codes.js: the lists are frozen, unique, and ALL_CODES is their union', () => {
    const lists = { RESYNC_REASONS, IGNORED_REASONS, ERROR_CODES, GUARD_REASONS, EDIT_REASONS, SNAPSHOT_REASONS, REPLAY_REASONS, ALL_CODES };
    for (const [name, list] of Object.entries(lists)) {
      assert.ok(Object.isFrozen(list), `${name} is frozen`);
      assert.equal(new Set(list).size, list.length, `${name} has no repeats`);
    }
    const union = new Set([...RESYNC_REASONS, ...IGNORED_REASONS, ...ERROR_CODES, ...GUARD_REASONS, ...EDIT_REASONS]);
    assert.deepEqual(new Set(ALL_CODES), union);
    for (const reason of [...SNAPSHOT_REASONS, ...REPLAY_REASONS]) assert.ok(RESYNC_REASONS.includes(reason), reason);
  });

  test('codes.d.ts: each union lists exactly its codes.js array', () => {
    const dts = readFileSync(join(jsDir, 'types', 'codes.d.ts'), 'utf8');
    const union = (name) => {
      const match = new RegExp(`export type ${name} =([^;]*);`).exec(dts);
      assert.ok(match, `codes.d.ts declares ${name}`);
      return [...match[1].matchAll(/'([^']+)'/g)].map((m) => m[1]);
    };
    assert.deepEqual(union('ResyncReason'), [...RESYNC_REASONS]);
    assert.deepEqual(union('IgnoredReason'), [...IGNORED_REASONS]);
    assert.deepEqual(union('ErrorCode'), [...ERROR_CODES]);
    assert.deepEqual(union('GuardReason'), [...GUARD_REASONS]);
  });

  test('index.d.ts takes its code unions from codes.d.ts and declares none of its own', () => {
    const dts = readFileSync(join(jsDir, 'types', 'index.d.ts'), 'utf8');
    const reexport = /export type \{([^}]*)\} from '\.\/codes\.js';/.exec(dts);
    assert.ok(reexport, "index.d.ts re-exports from './codes.js'");
    const names = reexport[1].split(',').map((s) => s.trim()).sort();
    assert.deepEqual(names, ['EditReason', 'ErrorCode', 'GuardReason', 'IgnoredReason', 'ResyncReason']);
    for (const name of names) assert.doesNotMatch(dts, new RegExp(`type ${name}\\s*=`), `index.d.ts must not redefine ${name}`);
    assert.ok(/export class AguiSyncError extends Error \{[^]*?readonly code: ErrorCode;/.test(dts), 'AguiSyncError.code is an ErrorCode');
  });
});

describe('js/src spells only listed codes', () => {
  const all = Object.values(scans).flatMap((s) => s.found);

  test('the scan sees the codes (sanity)', () => {
    assert.ok(all.filter((f) => f.kind === 'error').length >= 60, `only ${all.length} codes found`);
    assert.ok(all.filter((f) => f.kind === 'reason').length >= 5);
  });

  test('every error code (AguiSyncError factories, `code:`, `.code ===`) is in ERROR_CODES', () => {
    const unknown = all.filter((f) => f.kind === 'error' && !ERROR_CODES.includes(f.value));
    assert.deepEqual(unknown, []);
  });

  test("every `reason:` is a listed reason; guard.js's are GUARD_REASONS", () => {
    const reasons = all.filter((f) => f.kind === 'reason');
    assert.deepEqual(reasons.filter((f) => !REASONS.has(f.value)), []);
    const guard = scans['client/guard.js'].found.filter((f) => f.kind === 'reason');
    assert.ok(guard.length >= 4);
    assert.deepEqual(guard.filter((f) => !GUARD_REASONS.includes(f.value)), []);
  });

  test('an error factory is only ever given a literal code (or forwards a code it was given, checked)', () => {
    const computed = Object.values(scans).flatMap((s) => s.computed);
    const forwarding = /\(\.\.\. (code|fallback|failureCode\(failure, fallback\)) \.\.\.\)$/;
    assert.deepEqual(computed.filter((c) => !forwarding.test(c)), []);
  });

  test('no error message is parsed or compared', () => {
    assert.deepEqual(Object.values(scans).flatMap((s) => s.messageChecks), []);
  });

  test('resync-wire.js builds SNAPSHOT_REASONS from codes.js', async () => {
    const { SNAPSHOT_REASONS: set } = await import(join(jsDir, 'src', 'server.js'));
    assert.ok(set instanceof Set);
    assert.deepEqual([...set], [...SNAPSHOT_REASONS]);
  });
});

// --- what the engine reports ----------------------------------------------------

function assertFailure(json, list, { opIndex = false } = {}) {
  const failure = JSON.parse(json);
  assert.equal(failure.ok, false, json);
  assert.deepEqual(Object.keys(failure).sort(), ['code', 'message', 'ok', ...(opIndex ? ['opIndex'] : [])].sort(), json);
  assert.equal(typeof failure.message, 'string');
  assert.ok(list.includes(failure.code), `${failure.code} is not listed (${json})`);
  return failure.code;
}

describe('codes the engine reports are listed', () => {
  test('SyncFacade: initResult, guardView, guardApprove, guardBlocker, canonicalize', async () => {
    const sync = await pkg.createStateSync();
    const { engine, facade } = sync[kInternals]();
    const bad = new engine.SyncFacade('{"maxDepth":2,"initialState":{"a":{"b":{"c":{}}}}}');
    assert.equal(assertFailure(bad.initResult(), ERROR_CODES), 'invalid-options');
    bad.delete();
    assert.deepEqual(JSON.parse(facade.initResult()), { ok: true });
    assert.equal(assertFailure(facade.guardView('no-slash'), GUARD_REASONS), 'invalid-token');
    assert.equal(assertFailure(facade.guardView('/a'), GUARD_REASONS), 'missing');
    assert.equal(assertFailure(facade.guardApprove('{"path":"","seq":null,"digest":"x"}', 0), GUARD_REASONS), 'unverified');
    assert.ok(GUARD_REASONS.includes(facade.guardBlocker(0)));
    assert.equal(assertFailure(engine.canonicalize('"\\ud800"'), ERROR_CODES), 'invalid-json');
    assert.equal(assertFailure(engine.canonicalize('['.repeat(300) + ']'.repeat(300)), ERROR_CODES), 'limit-exceeded');
    sync.dispose();
  });

  test('feed outcomes: error codes, resync and ignored reasons', async () => {
    const sync = await pkg.createStateSync({ maxEventBytes: 256, reorderWindow: 2 });
    const outcomes = [
      ...sync.feed(sse(snapshot({ n: 0 }, 1)) + sse(delta([{ op: 'replace', path: '/n', value: 1 }], 2))),
      ...sync.feed(sse(delta([{ op: 'replace', path: '/n', value: 1 }], 2))), // duplicate
      ...sync.feed(sse(delta([{ op: 'replace', path: '/n', value: 9 }], 5))), // reordered (held)
      ...sync.feed('data: {oops\n\n'), // invalid-json
      ...sync.feed(sse({ type: 'CUSTOM', name: 'x', value: 'y'.repeat(300) })), // limit-exceeded
      ...sync.feed(sse(delta([{ op: 'remove', path: '/missing' }], 3))), // patch-failed: resync
      ...sync.feed(sse(delta([{ op: 'replace', path: '/n', value: 2 }], 6))), // awaiting-snapshot
      ...sync.feed(sse(snapshot({ n: 0 }, 1))), // stale-snapshot
      ...sync.end(),
    ];
    const seen = { error: new Set(), resync: new Set(), ignored: new Set() };
    for (const o of outcomes) {
      if (o.kind === 'error') seen.error.add(o.code);
      if (o.kind === 'resync') seen.resync.add(o.reason);
      if (o.kind === 'ignored') seen.ignored.add(o.reason);
    }
    for (const code of seen.error) assert.ok(ERROR_CODES.includes(code), code);
    for (const reason of seen.resync) assert.ok(RESYNC_REASONS.includes(reason), reason);
    for (const reason of seen.ignored) assert.ok(IGNORED_REASONS.includes(reason), reason);
    assert.ok(seen.error.size >= 2 && seen.resync.size >= 1 && seen.ignored.size >= 2, JSON.stringify(outcomes.map((o) => [o.kind, o.code ?? o.reason])));
    assert.ok(RESYNC_REASONS.includes(sync.resyncRequest().reason));
    sync.dispose();
  });

  test('EmitterFacade: initResult, update, patch (with opIndex), replay', async () => {
    const emitter = await pkg.createStateEmitter({ maxDepth: 3, initialState: { n: 0 } });
    const { engine, facade } = emitter[kInternals]();
    const bad = new engine.EmitterFacade('{"maxDepth":0}');
    assert.equal(assertFailure(bad.initResult(), ERROR_CODES), 'invalid-options');
    bad.delete();
    assert.equal(assertFailure(facade.update('nope'), ERROR_CODES), 'invalid-json');
    assert.equal(assertFailure(facade.update('{"a":{"b":{"c":{"d":1}}}}'), ERROR_CODES), 'limit-exceeded');
    assert.equal(assertFailure(facade.patch('[{"op":"remove","path":"/nope"}]'), ERROR_CODES, { opIndex: true }), 'patch-failed');
    assert.equal(assertFailure(facade.patch('[{"op":"test","path":"/n","value":1}]'), ERROR_CODES, { opIndex: true }), 'precondition-failed');
    assert.equal(assertFailure(facade.patch('[{"op":"jump","path":"/n"}]'), ERROR_CODES, { opIndex: true }), 'invalid-patch');
    assert.equal(assertFailure(facade.replay('{}'), ERROR_CODES), 'invalid-request');
    assert.deepEqual(JSON.parse(facade.replay('{"seq":0,"epoch":null,"skip":[]}')), { ok: true, events: [] });
    emitter.dispose();
    const last = await pkg.createStateEmitter({ startSeq: Number.MAX_SAFE_INTEGER });
    assert.equal(assertFailure(last[kInternals]().facade.update('{"a":1}'), ERROR_CODES), 'seq-exhausted');
    last.dispose();
  });
});
