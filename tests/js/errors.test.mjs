// Errors as data: every error the public API throws (or rejects with) is an
// AguiSyncError whose `code` is in ERROR_CODES; argument and option errors are
// TypeErrors too. A sweep with bad input of every kind.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { before, describe, test } from 'node:test';
import { inspect } from 'node:util';
import { jsDir, kInternals, pkg, snapshot, sse } from './support.mjs';

const { AguiSyncError, canonicalJson, connectStateSync, createStateEmitter, createStateSync, initEngine, stateDigest } = pkg;
const { ERROR_CODES } = await import(join(jsDir, 'src', 'engine', 'codes.js'));
const server = await import(join(jsDir, 'src', 'server.js'));

const ARGUMENT_CODES = ['invalid-argument', 'invalid-options'];

before(() => initEngine());

// Asserts `error` is an AguiSyncError with a listed code (`code` if given); returns it.
function assertSyncError(error, code, what) {
  assert.ok(error instanceof AguiSyncError, `${what}: not an AguiSyncError: ${error}`);
  assert.ok(error instanceof Error, what);
  assert.ok(ERROR_CODES.includes(error.code), `${what}: code ${error.code} is not in ERROR_CODES`);
  assert.match(error.message, /^agui-state-sync: /, what);
  if (code !== undefined) assert.equal(error.code, code, `${what}: ${error.message}`);
  if (error instanceof TypeError) assert.ok(ARGUMENT_CODES.includes(error.code), `${what}: a TypeError with code ${error.code}`);
  return error;
}

function thrownBy(fn, code, what = String(fn)) {
  let thrown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  assert.notEqual(thrown, undefined, `${what} did not throw`);
  return assertSyncError(thrown, code, what);
}

async function rejectionOf(promise, code, what) {
  let thrown;
  try {
    await promise;
  } catch (error) {
    thrown = error;
  }
  assert.notEqual(thrown, undefined, `${what} did not reject`);
  return assertSyncError(thrown, code, what);
}

const quiet = async (fn) => {
  const warn = console.warn;
  console.warn = () => {}; // Emscripten reports aborts and failed compiles
  try {
    return await fn();
  } finally {
    console.warn = warn;
  }
};

describe('AguiSyncError', () => {
  test('is exported, carries code/opIndex/status, and recognises the package\'s TypeErrors', () => {
    const error = new AguiSyncError('http-error', 'agui-state-sync: HTTP 503', { status: 503, cause: 1 });
    assert.ok(error instanceof Error);
    assert.ok(!(error instanceof TypeError));
    assert.equal(error.code, 'http-error');
    assert.equal(error.status, 503);
    assert.equal(error.cause, 1);
    assert.equal('opIndex' in error, false);
    assert.equal(new AguiSyncError('patch-failed', 'x', { opIndex: 2 }).opIndex, 2);
    assert.equal(error instanceof AguiSyncError, true);
    assert.equal(new TypeError('x') instanceof AguiSyncError, false);
    assert.equal(new Error('x') instanceof AguiSyncError, false);
    assert.equal(null instanceof AguiSyncError, false);
    const typeError = thrownBy(() => canonicalJson(1n), 'invalid-argument');
    assert.ok(typeError instanceof TypeError);
    assert.equal(typeError.name, 'TypeError');
    assert.equal(error.name, 'Error');
  });
});

describe('every thrown error is an AguiSyncError with a listed code', () => {
  test('createStateSync / initEngine options', async () => {
    const deep = JSON.parse('['.repeat(10) + ']'.repeat(10));
    for (const [options, code] of [
      ['nope', 'invalid-options'], [{ maxDepth: 0 }, 'invalid-options'], [{ bogus: 1 }, 'invalid-options'],
      [{ now: 5 }, 'invalid-options'], [{ staleCheckMs: -1 }, 'invalid-options'], [{ trustUnsequenced: 'yes' }, 'invalid-options'],
      [{ initialState: 1n }, 'invalid-options'], [{ wasmBinary: 'x' }, 'invalid-options'], [{ locateFile: 'x' }, 'invalid-options'],
      [{ maxDepth: 2, initialState: deep }, 'invalid-options'], // refused by the engine
    ]) {
      await rejectionOf(createStateSync(options), code, `createStateSync(${inspect(options)})`);
    }
    await quiet(() => rejectionOf(createStateSync({ wasmBinary: new Uint8Array([0, 97, 115, 109, 9]) }), 'load-failed', 'a broken wasmBinary'));
    for (const options of ['x', { bogus: 1 }, { wasmBinary: 'nope' }]) {
      await rejectionOf(initEngine(options), 'invalid-options', `initEngine(${inspect(options)})`);
    }
  });

  test('StateSync and its guard: wrong arguments, then disposed', async () => {
    const sync = await createStateSync();
    sync.feed(sse(snapshot({ a: 1 }, 1)));
    const { token } = sync.guard.view('/a');
    for (const [fn, code] of [
      [() => sync.feed(42), 'invalid-argument'],
      [() => sync.feed(null), 'invalid-argument'],
      [() => sync.subscribe('nope'), 'invalid-argument'],
      [() => sync.guard.approve(token, 'x'), 'invalid-argument'],
      [() => sync.guard.approve(token, { interruptId: 5 }), 'invalid-argument'],
      [() => sync.guard.watch('/a'), 'invalid-argument'],
      [() => sync.guard.watch('no-slash', () => {}), 'invalid-argument'],
      [() => sync.guard.resumeEntry({}), 'invalid-argument'],
      [() => sync.guard.resumeEntry({ interruptId: 'i' }, 'x'), 'invalid-argument'],
      [() => sync.guard.resumeEntry({ interruptId: 'i' }, { approved: false }), 'invalid-argument'],
    ]) {
      assert.ok(thrownBy(fn, code) instanceof TypeError);
    }
    sync.dispose();
    for (const fn of [
      () => sync.feed('x'), () => sync.end(), () => sync.reset(), () => sync.state, () => sync.status, () => sync.lastSeq,
      () => sync.lastEventId, () => sync.epoch, () => sync.resyncRequest(), () => sync.metrics(), () => sync.subscribe(() => {}),
    ]) {
      thrownBy(fn, 'disposed');
    }
    assert.deepEqual(sync.guard.approve(token), { ok: false, reason: 'disposed' });
  });

  test('canonicalJson / stateDigest', async () => {
    await initEngine();
    for (const value of [undefined, () => 1, Symbol('s'), 1n, NaN, { s: 'lone \ud800' }]) {
      thrownBy(() => canonicalJson(value), 'invalid-argument', `canonicalJson(${String(typeof value)})`);
      thrownBy(() => stateDigest(value), 'invalid-argument');
    }
    const cyclic = {};
    cyclic.self = cyclic;
    thrownBy(() => canonicalJson(cyclic), 'invalid-argument');
    const tooDeep = JSON.parse('['.repeat(300) + ']'.repeat(300));
    const deepError = thrownBy(() => stateDigest(tooDeep), 'limit-exceeded');
    assert.ok(!(deepError instanceof TypeError));
  });

  test('before any engine is loaded: not-loaded (fresh realm)', () => {
    const entry = pathToFileURL(join(jsDir, 'src', 'index.js')).href;
    const script = `
      const p = await import(${JSON.stringify(entry)});
      const seen = [];
      for (const call of [() => p.canonicalJson({}), () => p.stateDigest(1), () => p.verifyApproval({}, {})]) {
        try { call(); seen.push('no error'); } catch (e) { seen.push([e instanceof p.AguiSyncError, e.code]); }
      }
      console.log(JSON.stringify(seen));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), Array(3).fill([true, 'not-loaded']));
  });

  test('the browser engine has no renderer or effect key: not-loaded until the server engine is (fresh realm)', () => {
    const entry = pathToFileURL(join(jsDir, 'src', 'index.js')).href;
    const server = pathToFileURL(join(jsDir, 'src', 'server.js')).href;
    const script = `
      const p = await import(${JSON.stringify(entry)});
      const s = await import(${JSON.stringify(server)});
      const approval = { path: '/a', seq: 1, digest: 'sha256:00', epoch: 'e' };
      const calls = [() => p.renderStateForPrompt({ a: 1 }).text, () => s.promptMessage({}).role, () => s.effectKey(approval).length];
      const seen = [];
      const look = () => calls.map((call) => { try { return call(); } catch (e) { return [e instanceof p.AguiSyncError, e.code]; } });
      await p.initEngine();
      seen.push(look(), p.canonicalJson({ b: 1 }));
      await p.initServerEngine();
      seen.push(look());
      console.log(JSON.stringify(seen));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const [before, canonical, after] = JSON.parse(r.stdout);
    assert.deepEqual(before, Array(3).fill([true, 'not-loaded']));
    assert.equal(canonical, '{"b":1}', 'what a browser calls works with the browser engine');
    assert.deepEqual(after.slice(1), ['user', 64]);
    assert.match(after[0], /"a":1/);
  });

  test('StateEmitter: options, arguments, refusals (code + opIndex), seq exhaustion, disposed', async () => {
    for (const options of ['nope', { epoch: 7 }, { startSeq: -1 }, { bogus: 1 }, { guardedPaths: '/a' }, { initialState: 1n }, { maxDepth: 0 }]) {
      await rejectionOf(createStateEmitter(options), 'invalid-options', `createStateEmitter(${inspect(options)})`);
    }
    const deep = JSON.parse('['.repeat(200) + ']'.repeat(200));
    await rejectionOf(createStateEmitter({ initialState: deep }), 'invalid-options', 'engine-refused initialState');
    const emitter = await createStateEmitter({ maxDepth: 4, initialState: { n: 0 } });
    for (const fn of [
      () => emitter.update(undefined), () => emitter.update({ big: 1n }), () => emitter.patch(undefined),
      () => emitter.replaySince(-1), () => emitter.replaySince(0, 5), () => emitter.replaySince(0, 'e', [-1]),
      () => emitter.encode(undefined), () => server.catchUp({}, {}),
      () => server.startHeartbeat({ write() {} }, emitter, 0),
    ]) {
      assert.ok(thrownBy(fn, 'invalid-argument') instanceof TypeError);
    }
    assert.ok(thrownBy(() => server.startHeartbeat({ write() {} }, emitter, 5, { write: 'no' }), 'invalid-options') instanceof TypeError);
    thrownBy(() => emitter.update({ a: { b: { c: { d: { e: 1 } } } } }), 'limit-exceeded');
    for (const [ops, code, opIndex] of [
      [[{ op: 'remove', path: '/missing' }], 'patch-failed', 0],
      [[{ op: 'add', path: '/m', value: 1 }, { op: 'test', path: '/n', value: 9 }], 'precondition-failed', 1],
      [[{ op: 'jump', path: '/n' }], 'invalid-patch', 0],
      [{ not: 'ops' }, 'invalid-patch', 0],
    ]) {
      const error = thrownBy(() => emitter.patch(ops), code);
      assert.equal(error.opIndex, opIndex);
      assert.ok(!(error instanceof TypeError));
    }
    emitter.dispose();
    for (const fn of [() => emitter.update({}), () => emitter.patch([]), () => emitter.snapshot(), () => emitter.seq,
      () => emitter.state, () => emitter.stats(), () => emitter.heartbeat(), () => emitter.replaySince(0), () => server.catchUp(emitter, {})]) {
      thrownBy(fn, 'disposed');
    }
    const last = await createStateEmitter({ startSeq: Number.MAX_SAFE_INTEGER });
    thrownBy(() => last.update({ a: 1 }), 'seq-exhausted');
    last.dispose();
  });

  test('connectStateSync: arguments, HTTP errors (status), idle timeout, a bad body()', async () => {
    const sync = await createStateSync();
    const url = 'http://agent.invalid/stream';
    for (const [args, code] of [
      [[null, { url }], 'invalid-argument'], [[sync, null], 'invalid-options'], [[sync, {}], 'invalid-options'],
      [[sync, { url, fetch: 5 }], 'invalid-options'], [[sync, { url, backoff: { jitter: 2 } }], 'invalid-options'],
      [[sync, { url, body: {} }], 'invalid-options'], [[sync, { url, idleTimeoutMs: 0 }], 'invalid-options'],
      [[sync, { url, onChunk: 1 }], 'invalid-options'],
    ]) {
      assert.ok(thrownBy(() => connectStateSync(...args), code) instanceof TypeError);
    }
    const refused = connectStateSync(sync, { url, fetch: async () => new Response('no', { status: 400 }) });
    assert.equal((await rejectionOf(refused.done, 'http-error', 'HTTP 400')).status, 400);

    const errors = [];
    const retrying = connectStateSync(sync, {
      url,
      backoff: { initialMs: 1, maxMs: 1 },
      idleTimeoutMs: 30,
      fetch: async (_, init) => {
        if (errors.length === 0) return new Response('busy', { status: 503 });
        // A stream that never delivers a byte: the idle timeout aborts it.
        const body = new ReadableStream({
          start(controller) {
            init.signal.addEventListener('abort', () => controller.error(init.signal.reason), { once: true });
          },
        });
        return new Response(body, { status: 200 });
      },
      onStatus: (s) => {
        if (s.state !== 'waiting') return;
        errors.push(s.error);
        if (errors.length === 2) retrying.close();
      },
    });
    await retrying.done;
    assert.equal(assertSyncError(errors[0], 'http-error', 'HTTP 503').status, 503);
    assertSyncError(errors[1], 'idle-timeout', 'idle stream');

    const badBody = connectStateSync(sync, { url, body: () => 5, fetch: async () => new Response('') });
    await rejectionOf(badBody.done, 'invalid-options', 'body() returning a number');
    sync.dispose();
    // A disposed StateSync just stops the loop.
    await connectStateSync(sync, { url, fetch: async () => new Response('') }).done;
  });

  test('a failed engine: engine-failed for the owner and every StateSync sharing it', async () => {
    const sync = await createStateSync();
    const bystander = await createStateSync();
    sync[kInternals]().facade.feedInput = () => {
      throw 5242880; // an escaped C++ exception
    };
    const first = thrownBy(() => sync.feed('data: {}\n\n'), 'engine-failed');
    assert.ok(first.cause instanceof Error);
    for (const fn of [() => sync.state, () => sync.metrics(), () => bystander.feed('x'), () => bystander.status]) {
      thrownBy(fn, 'engine-failed');
    }
    assert.deepEqual(bystander.guard.view(''), { ok: false, reason: 'engine-failed' });
    const done = connectStateSync(bystander, { url: 'http://agent.invalid/', fetch: async () => new Response('') }).done;
    await rejectionOf(done, 'engine-failed', 'connect on a failed engine');
    sync.dispose();
    bystander.dispose();

    const emitter = await createStateEmitter();
    emitter[kInternals]().facade.update = () => {
      throw new WebAssembly.RuntimeError('unreachable');
    };
    await quiet(() => thrownBy(() => emitter.update({ a: 1 }), 'engine-failed'));
    thrownBy(() => emitter.seq, 'engine-failed');
    emitter.dispose();
  });
});
