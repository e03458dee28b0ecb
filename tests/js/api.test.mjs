// The public API of agui-state-sync through the WASM engine.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertMirrors, delta, kInternals, pkg, separateWasm, snapshot, sse } from './support.mjs';

const { createStateSync } = pkg;
const encoder = new TextEncoder();

function assertOnlyErrors(fn, pattern) {
  let thrown = null;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  assert.ok(thrown instanceof Error, `expected an Error, got ${String(thrown)}`);
  if (pattern) assert.match(thrown.message, pattern);
  return thrown;
}

describe('createStateSync', () => {
  test('defaults: empty object state, unverified, no seq', async () => {
    const sync = await createStateSync();
    assert.deepEqual(sync.state, {});
    assert.equal(sync.status, 'unverified');
    assert.equal(sync.lastSeq, null);
    assert.equal(sync.lastEventId, null);
    assert.equal(sync.resyncRequest(), null);
    sync.dispose();
  });

  test('initialState is the starting state (a JSON copy) and reaches the engine', async () => {
    const initialState = { a: 1, nested: { list: [1, 2] }, skip: undefined };
    const sync = await createStateSync({ initialState });
    assert.deepEqual(sync.state, { a: 1, nested: { list: [1, 2] } });
    assertMirrors(sync);
    initialState.a = 99; // the caller's object is not the state
    assert.equal(sync.state.a, 1);
    sync.feed(sse(delta([{ op: 'replace', path: '/nested/list/1', value: 3 }])));
    assert.deepEqual(sync.state, { a: 1, nested: { list: [1, 3] } });
    assertMirrors(sync);
    sync.dispose();
  });

  test('non-object initialState', async () => {
    const sync = await createStateSync({ initialState: [1, 'two'] });
    sync.feed(sse(delta([{ op: 'add', path: '/-', value: 3 }])));
    assert.deepEqual(sync.state, [1, 'two', 3]);
    sync.dispose();
  });

  test('limits are passed to the engine', async () => {
    const sync = await createStateSync({ maxEventBytes: 64, maxDepth: 3, reorderWindow: 1, maxStateBytes: 1000 });
    const big = sync.feed(sse({ type: 'CUSTOM', name: 'x', value: 'y'.repeat(100) }));
    assert.equal(big[0].kind, 'error');
    assert.equal(big[0].code, 'limit-exceeded');
    sync.dispose();
  });

  test('invalid options reject with an Error', async () => {
    for (const options of [
      { maxDepth: 0 },
      { maxDepth: -1 },
      { reorderWindow: 1.5 },
      { maxEventBytes: '10' },
      { maxStateBytes: Infinity },
      { maxDepht: 3 },
      'nope',
      { initialState: () => 1 },
      { initialState: { big: 1n } },
      { wasmBinary: 'not bytes' },
      { locateFile: 'x' },
    ]) {
      await assert.rejects(createStateSync(options), (e) => e instanceof Error && /^agui-state-sync: /.test(e.message),
        JSON.stringify(String(options)));
    }
    const cyclic = {};
    cyclic.self = cyclic;
    await assert.rejects(createStateSync({ initialState: cyclic }), /initialState must be JSON-serializable/);
  });

  test('engine-side option validation (initialState deeper than maxDepth)', async () => {
    await assert.rejects(createStateSync({ maxDepth: 2, initialState: { a: { b: { c: {} } } } }),
      /^Error: agui-state-sync: invalid options: initialState nests deeper than maxDepth/);
  });

  test('a broken wasmBinary rejects with an Error and does not poison the default engine', async () => {
    const originalWarn = console.warn;
    console.warn = () => {}; // Emscripten reports the failed compile
    try {
      await assert.rejects(createStateSync({ wasmBinary: new Uint8Array([0, 97, 115, 109, 9]) }),
        (e) => e instanceof Error && /^agui-state-sync: could not load the WebAssembly engine/.test(e.message));
    } finally {
      console.warn = originalWarn;
    }
    const sync = await createStateSync();
    assert.equal(sync.feed(sse({ type: 'RUN_STARTED' }))[0].kind, 'event');
    sync.dispose();
  });

  test('wasmBinary option', { skip: !separateWasm && 'single-file build' }, async () => {
    const { readFile } = await import('node:fs/promises');
    const { jsDir } = await import('./support.mjs');
    const bytes = await readFile(`${jsDir}/wasm/agui_sync.wasm`);
    const sync = await createStateSync({ wasmBinary: bytes });
    assert.equal(sync.feed(sse(snapshot({ ok: true }, 1)))[0].kind, 'applied');
    assert.deepEqual(sync.state, { ok: true });
    sync.dispose();
    const sync2 = await createStateSync({ locateFile: (p, prefix) => prefix + p });
    assert.equal(sync2.feed(sse(snapshot({ ok: 2 }, 1)))[0].kind, 'applied');
    sync2.dispose();
  });
});

describe('feed', () => {
  test('one outcome per complete event; every kind has its documented shape', async () => {
    const sync = await createStateSync();
    const stream =
      sse(snapshot({ todos: [], meta: { n: 0 } }, 1), { id: 'e1' }) +
      sse(delta([{ op: 'add', path: '/todos/-', value: { t: 'a' } }], 2)) +
      sse({ type: 'RUN_STARTED', threadId: 't', runId: 'r' }) +
      sse(delta([{ op: 'add', path: '/todos/-', value: { t: 'a' } }], 2)) + // duplicate
      sse(delta([{ op: 'replace', path: '/meta/n', value: 4 }], 4)) + // gap: held
      'data: {"type":"RUN_FINISHED",oops}\n\n'; // invalid JSON, visibly not a state event: no resync
    const outcomes = sync.feed(stream);
    assert.deepEqual(outcomes.map((o) => o.kind), ['applied', 'applied', 'event', 'ignored', 'ignored', 'error']);
    const [snap, add, ev, dup, held, err] = outcomes;
    assert.deepEqual(Object.keys(snap).sort(), ['changedPaths', 'event', 'kind', 'seq', 'state', 'type']);
    assert.equal(snap.type, 'STATE_SNAPSHOT');
    assert.equal(snap.seq, 1);
    assert.deepEqual(snap.changedPaths, ['']);
    assert.deepEqual(snap.state, { todos: [], meta: { n: 0 } });
    assert.equal(add.type, 'STATE_DELTA');
    assert.equal(add.seq, 2);
    assert.deepEqual(add.state, { todos: [{ t: 'a' }], meta: { n: 0 } });
    assert.equal(add.state, sync.state, 'the last applied outcome carries the current state object');
    assert.notEqual(snap.state, add.state);
    assert.deepEqual(ev, { kind: 'event', event: { type: 'RUN_STARTED', threadId: 't', runId: 'r' } });
    assert.deepEqual(dup, { kind: 'ignored', reason: 'duplicate', seq: 2 });
    assert.deepEqual(held, { kind: 'ignored', reason: 'reordered', seq: 4 });
    assert.equal(err.kind, 'error');
    assert.equal(err.code, 'invalid-json');
    assert.equal(typeof err.message, 'string');
    assert.equal(sync.status, 'synced');
    assert.equal(sync.lastSeq, 2);
    assert.equal(sync.lastEventId, 'e1');

    // The missing seq 3 arrives: it applies, then the held seq 4.
    const healed = sync.feed(sse(delta([{ op: 'replace', path: '/meta/n', value: 3 }], 3)));
    assert.deepEqual(healed.map((o) => [o.kind, o.seq]), [['applied', 3], ['applied', 4]]);
    assert.equal(healed[0].state.meta.n, 3);
    assert.equal(healed[1].state.meta.n, 4);
    assert.equal(healed[1].state, sync.state);
    assert.equal(healed[0].state.todos, healed[1].state.todos, 'untouched subtree shared between outcomes');
    assertMirrors(sync);
    sync.dispose();
  });

  test('strings and bytes, any chunking, including splits inside UTF-8 sequences', async () => {
    const events = [
      snapshot({ text: 'héllo wörld — ✓ 𝄞 emoji 😀' }, 1),
      delta([{ op: 'add', path: '/more', value: '日本語のテキスト' }], 2),
      delta([{ op: 'add', path: '/😀', value: ['\u2028', '\u0000'] }], 3),
    ];
    const text = events.map((e) => sse(e)).join('');
    const bytes = encoder.encode(text);
    const reference = await createStateSync();
    reference.feed(text);
    const expected = reference.state;
    assert.equal(expected.more, '日本語のテキスト');
    reference.dispose();
    for (const chunkSize of [1, 2, 3, 5, 7, 64, bytes.length]) {
      const viaBytes = await createStateSync();
      const viaText = await createStateSync();
      let applied = 0;
      for (let i = 0; i < bytes.length; i += chunkSize) {
        applied += viaBytes.feed(bytes.subarray(i, i + chunkSize)).length;
      }
      for (let i = 0; i < text.length; i += chunkSize) {
        viaText.feed(text.slice(i, i + chunkSize)); // may split surrogate pairs: they are rejoined
      }
      assert.equal(applied, 3);
      assert.deepEqual(viaBytes.state, expected, `bytes in chunks of ${chunkSize}`);
      assert.deepEqual(viaText.state, expected, `strings in chunks of ${chunkSize}`);
      viaBytes.dispose();
      viaText.dispose();
    }
  });

  test('a lone surrogate at a string chunk end becomes U+FFFD if bytes or end() follow', async () => {
    const sync = await createStateSync();
    sync.feed('data: {"type":"CUSTOM","name":"n","value":"a\uD83D');
    const out = sync.feed(encoder.encode('b"}\n\n'));
    assert.equal(out[0].event.value, 'a\uFFFDb');
    sync.dispose();
  });

  test('other binary views and ArrayBuffer are accepted; other types throw a TypeError', async () => {
    const sync = await createStateSync();
    const bytes = encoder.encode(sse(snapshot({ a: 1 }, 1)));
    assert.equal(sync.feed(bytes.buffer.slice(0)).length, 1);
    assert.equal(sync.feed(new DataView(encoder.encode(sse(snapshot({ a: 2 }, 2))).buffer)).length, 1);
    assert.equal(sync.feed(Buffer.from(sse(snapshot({ a: 3 }, 3)))).length, 1);
    assert.equal(sync.state.a, 3);
    for (const bad of [undefined, null, 42, {}, [1, 2]]) {
      const e = assertOnlyErrors(() => sync.feed(bad), /feed\(\) takes a Uint8Array or a string/);
      assert.ok(e instanceof TypeError);
    }
    assert.deepEqual(sync.feed(''), []);
    assert.deepEqual(sync.feed(new Uint8Array(0)), []);
    sync.dispose();
  });

  test('large chunks (several MiB) cross in slices', async () => {
    const sync = await createStateSync();
    const big = 'x'.repeat(3 * 1024 * 1024 + 17);
    const text = sse(snapshot({ big }, 1)) + sse(delta([{ op: 'add', path: '/n', value: 1 }], 2));
    const outcomes = sync.feed(encoder.encode(text));
    assert.deepEqual(outcomes.map((o) => o.kind), ['applied', 'applied']);
    assert.equal(sync.state.big.length, big.length);
    const outcomes2 = sync.feed(sse(snapshot({ big: big + 'é' }, 3)));
    assert.equal(outcomes2.length, 1);
    assert.equal(sync.state.big.length, big.length + 1);
    sync.dispose();
  });

  test('bad input yields error outcomes and leaves the state untouched', async () => {
    const sync = await createStateSync();
    sync.feed(sse(snapshot({ keep: { me: [1] } }, 1)));
    const before = sync.state;
    const bad = [
      'data: {"type":"STATE_DELTA","delta":[{"op":"add","path":"/x"}],"metadata":{"seq":2,"baseSeq":1}}\n\n',
      'data: [1,2,3]\n\n',
      'data: {"no":"type"}\n\n',
      'data: {"type":"STATE_DELTA","delta":"nope","metadata":{"seq":2,"baseSeq":1}}\n\n',
      'data: {"type":"STATE_DELTA","delta":[],"metadata":{"seq":-1,"baseSeq":1}}\n\n',
      'data: \u0000\u0001garbage\n\n',
      'data: ' + '['.repeat(100000) + '\n\n',
      new Uint8Array([0x64, 0x61, 0x74, 0x61, 0x3a, 0xff, 0xfe, 0x0a, 0x0a]),
    ];
    for (const chunk of bad) {
      const outcomes = sync.feed(chunk);
      assert.ok(outcomes.length >= 1);
      assert.equal(outcomes[0].kind, 'error', JSON.stringify(outcomes));
      assert.equal(typeof outcomes[0].code, 'string');
      assert.equal(typeof outcomes[0].message, 'string');
      assert.ok(outcomes.every((o) => o.kind === 'error' || o.kind === 'resync'));
      assert.equal(sync.state, before);
    }
    assert.equal(sync.status, 'resyncing');
    const req = sync.resyncRequest();
    assert.deepEqual(Object.keys(req).sort(), ['held', 'lastEventId', 'lastSeq', 'reason']);
    assert.equal(req.lastSeq, 1);
    assert.deepEqual(req.held, []);
    assertMirrors(sync);
    sync.dispose();
  });
});

describe('end, reset, resync', () => {
  test('end() turns a pending gap into a resync; a snapshot answers it', async () => {
    const sync = await createStateSync();
    sync.feed(sse(snapshot({ n: 1 }, 1), { id: 'a' }));
    assert.deepEqual(sync.feed(sse(delta([{ op: 'replace', path: '/n', value: 3 }], 3), { id: 'b' })).map((o) => o.reason), ['reordered']);
    assert.equal(sync.resyncRequest(), null);
    const ended = sync.end();
    assert.deepEqual(ended, [{ kind: 'resync', reason: 'gap', lastSeq: 1, lastEventId: 'b', detail: ended[0].detail }]);
    assert.equal(sync.status, 'resyncing');
    assert.deepEqual(sync.resyncRequest(), { reason: 'gap', lastSeq: 1, lastEventId: 'b', held: [3] });
    sync.resyncRequest().held.push(99); // a copy: the caller cannot change what the next call reports
    assert.deepEqual(sync.resyncRequest().held, [3]);
    sync.reset();
    const answered = sync.feed(sse(snapshot({ n: 5 }, 5)));
    assert.equal(answered[0].kind, 'applied');
    assert.equal(sync.status, 'synced');
    assert.equal(sync.resyncRequest(), null);
    assert.equal(sync.lastSeq, 5);
    const m = sync.metrics();
    assert.equal(m.resyncs, 1);
    assert.equal(m.resyncSnapshots, 1);
    assert.equal(m.taxRate, 0);
    sync.dispose();
  });

  test('reset() drops a partial event but keeps state, lastSeq and lastEventId', async () => {
    const sync = await createStateSync();
    sync.feed(sse(snapshot({ n: 1 }, 1), { id: '7' }));
    const state = sync.state;
    sync.feed('data: {"type":"STATE_DELTA","delta":[{"op":"replace","path":"/n","value":2}],"metadata":{"seq":2,"baseSeq":1}}');
    sync.reset();
    assert.deepEqual(sync.feed('\n\n'), []);
    assert.equal(sync.state, state);
    assert.equal(sync.lastSeq, 1);
    assert.equal(sync.lastEventId, '7');
    assert.equal(sync.status, 'synced');
    sync.dispose();
  });

  test('epoch comes from the engine: string epochs, and integer epochs with every digit', async () => {
    const sync = await createStateSync();
    assert.equal(sync.epoch, null);
    sync.feed('data: {"type":"STATE_SNAPSHOT","snapshot":{},"metadata":{"seq":1,"epoch":"run-a"}}\n\n');
    assert.equal(sync.epoch, 'run-a');
    // Beyond 2^53 JSON.parse would round it; the engine keeps the text.
    sync.feed('data: {"type":"STATE_SNAPSHOT","snapshot":{},"metadata":{"seq":1,"epoch":12345678901234567891}}\n\n');
    assert.equal(sync.epoch, '12345678901234567891');
    // A delta from another epoch is refused and leaves the epoch alone.
    sync.feed('data: {"type":"STATE_DELTA","delta":[],"metadata":{"seq":2,"baseSeq":1,"epoch":"other"}}\n\n');
    assert.equal(sync.epoch, '12345678901234567891');
    sync.dispose();
  });

  test('metrics() has the C++ counters, byte totals and taxRate', async () => {
    const sync = await createStateSync();
    sync.feed(': heartbeat\n\n' + sse(snapshot({ n: 0 }, 1)) + sse(delta([{ op: 'replace', path: '/n', value: 1 }], 2)));
    const m = sync.metrics();
    for (const key of ['events', 'heartbeats', 'snapshots', 'deltasApplied', 'duplicates', 'errors', 'resyncs',
      'snapshotBytes', 'deltaBytes', 'deltaSavedBytes', 'netSavedBytes', 'stateBytes', 'taxRate', 'mirrorReloads']) {
      assert.equal(typeof m[key], 'number', key);
    }
    assert.equal(m.events, 2);
    assert.equal(m.heartbeats, 1);
    assert.equal(m.deltasApplied, 1);
    assert.equal(m.mirrorReloads, 0);
    assert.deepEqual(m.resyncsByReason, {});
    sync.dispose();
  });
});

describe('subscribe', () => {
  test('fires once per feed() that changed state or status; unsubscribe works', async () => {
    const sync = await createStateSync();
    const seen = [];
    const unsubscribe = sync.subscribe(() => seen.push([sync.status, sync.state]));
    sync.feed(sse(snapshot({ n: 0 }, 1)) + sse(delta([{ op: 'replace', path: '/n', value: 1 }], 2)) +
      sse(delta([{ op: 'replace', path: '/n', value: 2 }], 3)));
    assert.equal(seen.length, 1, 'one notification per feed() batch');
    assert.deepEqual(seen[0], ['synced', { n: 2 }]);
    sync.feed(sse({ type: 'RUN_STARTED' }) + ': ping\n\n');
    assert.equal(seen.length, 1, 'no change, no notification');
    sync.feed(sse(delta([{ op: 'replace', path: '/n', value: 9 }], 3))); // duplicate with different content
    assert.equal(seen.length, 2, 'a status change notifies');
    assert.equal(seen[1][0], 'resyncing');
    sync.end();
    assert.equal(seen.length, 2);
    unsubscribe();
    unsubscribe();
    sync.feed(sse(snapshot({ n: 5 }, 5)));
    assert.equal(seen.length, 2);
    sync.dispose();
    unsubscribe(); // after dispose: still harmless
  });

  test('a throwing listener does not break the engine or other listeners', async () => {
    const sync = await createStateSync();
    const reported = [];
    const originalError = console.error;
    const originalReport = globalThis.reportError;
    globalThis.reportError = undefined;
    console.error = (...args) => reported.push(args);
    try {
      let calls = 0;
      sync.subscribe(() => {
        throw new Error('listener bug');
      });
      sync.subscribe(() => calls++);
      const outcomes = sync.feed(sse(snapshot({ n: 1 }, 1)));
      assert.equal(outcomes.length, 1);
      assert.equal(calls, 1);
      assert.equal(reported.length, 1);
      assert.match(String(reported[0][1]), /listener bug/);
      sync.feed(sse(delta([{ op: 'replace', path: '/n', value: 2 }], 2)));
      assert.equal(calls, 2);
      assert.equal(sync.state.n, 2);
    } finally {
      console.error = originalError;
      globalThis.reportError = originalReport;
    }
    sync.dispose();
  });

  test('listeners may unsubscribe others, feed re-entrantly, or dispose', async () => {
    const sync = await createStateSync();
    const order = [];
    let unsubB;
    sync.subscribe(() => {
      order.push('a');
      unsubB();
    });
    unsubB = sync.subscribe(() => order.push('b'));
    sync.feed(sse(snapshot({ n: 1 }, 1)));
    assert.deepEqual(order, ['a']);
    const sync2 = await createStateSync();
    sync2.subscribe(() => {
      if (sync2.state.n === 1) sync2.feed(sse(delta([{ op: 'replace', path: '/n', value: 2 }], 2)));
    });
    sync2.feed(sse(snapshot({ n: 1 }, 1)));
    assert.equal(sync2.state.n, 2);
    const sync3 = await createStateSync();
    sync3.subscribe(() => sync3.dispose());
    sync3.feed(sse(snapshot({ n: 1 }, 1)));
    assert.throws(() => sync3.state, /was disposed/);
    assert.throws(() => sync.subscribe('nope'), TypeError);
    sync.dispose();
    sync2.dispose();
  });
});

describe('dispose and engine failure', () => {
  test('dispose is idempotent; every later call throws the documented Error', async () => {
    const sync = await createStateSync();
    sync.dispose();
    sync.dispose();
    const calls = [
      () => sync.feed('x'),
      () => sync.end(),
      () => sync.reset(),
      () => sync.state,
      () => sync.status,
      () => sync.lastSeq,
      () => sync.lastEventId,
      () => sync.resyncRequest(),
      () => sync.metrics(),
      () => sync.subscribe(() => {}),
    ];
    for (const call of calls) {
      const e = assertOnlyErrors(call);
      assert.equal(e.message, 'agui-state-sync: this StateSync was disposed');
    }
  });

  test('a C++ abort becomes a clear Error and the instance (and its engine) becomes unusable', async () => {
    const sync = await createStateSync();
    const bystander = await createStateSync();
    sync.feed(sse(snapshot({ n: 1 }, 1)));
    const internals = sync[kInternals]();
    const engine = internals.engine;
    // Make the real engine abort: ask for a scratch buffer larger than the
    // 2 GiB heap can ever hold (operator new fails -> abort() under -fno-exceptions).
    const realInputBuffer = internals.facade.inputBuffer.bind(internals.facade);
    internals.facade.inputBuffer = () => realInputBuffer(0x7ff00000);
    const originalWarn = console.warn;
    console.warn = () => {}; // Emscripten prints "Aborted(...)"
    let first;
    try {
      first = assertOnlyErrors(() => sync.feed('data: {}\n\n'), /^agui-state-sync: the WebAssembly engine failed/);
    } finally {
      console.warn = originalWarn;
    }
    assert.ok(first.cause instanceof Error);
    assert.ok(engine.failure, 'the shared engine is marked failed');
    for (const call of [() => sync.state, () => sync.feed('x'), () => sync.metrics(), () => sync.end()]) {
      assertOnlyErrors(call, /unusable after an engine failure/);
    }
    assertOnlyErrors(() => bystander.feed('x'), /unusable after an engine failure/);
    sync.dispose();
    sync.dispose();
    bystander.dispose();
    assertOnlyErrors(() => sync.state, /was disposed/);
    // A new StateSync gets a fresh engine instance.
    const fresh = await createStateSync();
    assert.notEqual(fresh[kInternals]().engine, engine);
    assert.equal(fresh.feed(sse(snapshot({ ok: 1 }, 1)))[0].kind, 'applied');
    fresh.dispose();
  });

  test('a bare number thrown by the engine (a stray C++ throw) becomes an Error', async () => {
    const sync = await createStateSync();
    const internals = sync[kInternals]();
    internals.facade.feedInput = () => {
      throw 5242880; // what an escaped C++ exception looks like in JS
    };
    const e = assertOnlyErrors(() => sync.feed('data: {}\n\n'), /C\+\+ exception object at 0x500000/);
    assert.ok(e.cause instanceof Error);
    sync.dispose();
  });
});
