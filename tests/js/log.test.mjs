// agui-state-sync/log (issue 16, section 2), case by case: the JSON Lines
// format and its errors, compaction's rules, replayEquivalent's verdicts,
// stateAt / branchFrom, and an emitter that starts a branch from stateAt().
// The random cases are in log-property.test.mjs, the comparison with
// @ag-ui/client in log-differential.test.mjs.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, test } from 'node:test';
import { assertAguiEvents } from './log-support.mjs';
import { jsDir, pkg, plain } from './support.mjs';

const log = await import(join(jsDir, 'src', 'log.js'));
const { branchFrom, compactEvents, listRuns, parseLog, parseLogStream, replayEquivalent, serializeLog, serializeLogEvent, serializeLogHeader, stateAt } = log;
const { AguiSyncError, createStateEmitter, stateDigest } = pkg;
await pkg.initEngine();

const started = (runId, parentRunId) => ({ type: 'RUN_STARTED', threadId: 't', runId, ...(parentRunId ? { parentRunId } : {}) });
const finished = (runId) => ({ type: 'RUN_FINISHED', threadId: 't', runId });
const snap = (snapshot, metadata) => ({ type: 'STATE_SNAPSHOT', snapshot, ...(metadata ? { metadata } : {}) });
const delta = (ops, metadata) => ({ type: 'STATE_DELTA', delta: ops, ...(metadata ? { metadata } : {}) });
const seqd = (ops, seq, epoch = 'e1') => delta(ops, { seq, baseSeq: seq - 1, epoch });
const add = (path, value) => ({ op: 'add', path, value });
const content = (messageId, text, extra = {}) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: text, ...extra });

async function collect(iterable) {
  const out = [];
  for await (const event of iterable) out.push(event);
  return out;
}

async function rejectsWith(promise, code, pattern) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof AguiSyncError, `an AguiSyncError, got ${error}`);
    assert.equal(error.code, code, error.message);
    if (pattern) assert.match(error.message, pattern);
    return true;
  });
}

// A thread with a branch: r1 (snapshot + delta), r2 (only deltas, continues
// r1), r3 (branches from r1, only deltas, the same seqs as r2 in epoch e1).
const BRANCHED = [
  started('r1'),
  snap({ run_log: [] }, { seq: 0, epoch: 'e1' }),
  seqd([add('/run_log/-', 'a')], 1),
  finished('r1'),
  started('r2'),
  seqd([add('/run_log/-', 'b')], 2),
  seqd([add('/count', 1)], 3),
  finished('r2'),
  started('r3', 'r1'),
  seqd([add('/run_log/-', 'c')], 2),
  finished('r3'),
];

describe('serializeLog / parseLog / parseLogStream', () => {
  const events = [started('r1'), content('m1', 'line\nbreak \u2028 é 😀'), snap({ '': { '/': [1, null] } })];

  test('a header line, then one line per event; parseLog reads it back; appending lines extends it', () => {
    const text = serializeLog(events);
    const lines = text.split('\n');
    assert.equal(lines[0], '{"aguiLog":1}');
    assert.equal(lines.length, events.length + 2, 'one line per event and a final newline');
    assert.deepEqual(parseLog(text), events);
    const extra = [finished('r1'), started('r2')];
    assert.deepEqual(parseLog(text + extra.map((e) => serializeLogEvent(e)).join('')), [...events, ...extra]);
    assert.deepEqual(parseLog(serializeLogHeader()), []);
  });

  test('a byte order mark, blank lines, CRLF and a header a restarted writer repeats are accepted', async () => {
    const text = `\uFEFF${serializeLogHeader()}\r\n${JSON.stringify(events[0])}\r\n\n${serializeLogHeader()}${JSON.stringify(events[1])}\n`;
    assert.deepEqual(parseLog(text), events.slice(0, 2));
    assert.deepEqual(await collect(parseLogStream([new TextEncoder().encode(text)])), events.slice(0, 2));
  });

  test('bad input fails naming its line', () => {
    const header = serializeLogHeader();
    const cases = [
      ['', 'invalid-event', 1, /no \{"aguiLog":1\} header/],
      ['{"type":"RUN_STARTED"}\n', 'invalid-event', 1, /expected the header/],
      ['{"aguiLog":2}\n', 'invalid-event', 1, /version 2/],
      [`${header}{"type":"A"}\n{"type":\n`, 'invalid-json', 3, /line 3: not JSON/],
      [`${header}\n[1,2]\n`, 'invalid-event', 3, /line 3: not an AG-UI event/],
      [`${header}{"type":""}\n`, 'invalid-event', 2, /line 2/],
      [`${header}{"type":"A"}\n{"type":"B"`, 'invalid-json', 3, /line 3/],
    ];
    for (const [text, code, line, pattern] of cases) {
      assert.throws(() => parseLog(text), (error) => {
        assert.ok(error instanceof AguiSyncError);
        assert.equal(error.code, code, `${JSON.stringify(text)}: ${error.message}`);
        assert.equal(error.line, line, `${JSON.stringify(text)}: ${error.message}`);
        assert.match(error.message, pattern);
        return true;
      });
    }
    assert.throws(() => parseLog(new Uint8Array(1)), TypeError);
  });

  test('a torn last line (no newline) is dropped only with dropTornTail; a bad line before it never is', () => {
    const text = serializeLog(events) + '{"type":"TEXT_MESSAGE_CONT';
    assert.throws(() => parseLog(text), { code: 'invalid-json', line: 5 });
    assert.deepEqual(parseLog(text, { dropTornTail: true }), events);
    assert.deepEqual(parseLog(serializeLog(events).slice(0, -1), { dropTornTail: true }), events, 'a complete last line without newline is kept');
    assert.throws(() => parseLog(`${serializeLog(events)}{"type":\n{"type":"A"`, { dropTornTail: true }), { code: 'invalid-json', line: 5 });
  });

  test('serializeLog refuses what is not an event or not JSON, naming its index', () => {
    assert.throws(() => serializeLog([started('r1'), { delta: 'x' }]), { code: 'invalid-event', index: 1 });
    assert.throws(() => serializeLog([{ type: 'CUSTOM', value: 1n }]), { code: 'invalid-event', index: 0 });
    assert.throws(() => serializeLog('nope'), TypeError);
  });

  test('parseLogStream: bytes split anywhere (inside UTF-8 sequences too), Node and web streams', async () => {
    const text = serializeLog(events);
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 2, 3, 5, 7, 64]) {
      const chunks = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      assert.deepEqual(await collect(parseLogStream(chunks)), events, `chunks of ${size} bytes`);
    }
    assert.deepEqual(await collect(parseLogStream(Readable.from([text.slice(0, 10), text.slice(10)]))), events);
    assert.deepEqual(await collect(parseLogStream(new Blob([bytes]).stream())), events);
    assert.deepEqual(await collect(parseLogStream([text + '{"type":"X', ''], { dropTornTail: true })), events);
  });

  test('parseLogStream yields the events before a bad line, then fails naming it', async () => {
    const seen = [];
    const text = `${serializeLog(events)}{"oops"}\n${JSON.stringify(events[0])}\n`;
    await assert.rejects(async () => {
      for await (const event of parseLogStream([text])) seen.push(event);
    }, { code: 'invalid-json', line: 5 });
    assert.deepEqual(seen, events);
    const badUtf8 = new Uint8Array([...new TextEncoder().encode(serializeLogHeader()), 0x7b, 0xff, 0x7d, 0x0a]);
    await assert.rejects(collect(parseLogStream([badUtf8])), { code: 'invalid-json', line: 2 });
    await assert.rejects(collect(parseLogStream(42)), TypeError);
  });
});

describe('compactEvents', () => {
  test('text and tool-call arguments merge in place; other events keep their order', async () => {
    const events = [
      started('r1'),
      { type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' },
      content('m1', 'Hel', { timestamp: 1 }),
      { type: 'CUSTOM', name: 'between', value: 1 },
      { type: 'TOOL_CALL_START', toolCallId: 't1', toolCallName: 'f', parentMessageId: 'm1' },
      { type: 'TOOL_CALL_ARGS', toolCallId: 't1', delta: '{"a"' },
      content('m1', 'lo', { timestamp: 2, rawEvent: { chunk: 2 } }),
      { type: 'TOOL_CALL_ARGS', toolCallId: 't1', delta: ':1}' },
      { type: 'TOOL_CALL_END', toolCallId: 't1' },
      { type: 'TEXT_MESSAGE_END', messageId: 'm1' },
      finished('r1'),
    ];
    const before = structuredClone(events);
    const compacted = await compactEvents(events);
    assert.deepEqual(events, before, 'the input is not modified');
    assert.deepEqual(compacted, [
      events[0], events[1],
      content('m1', 'Hello', { timestamp: 1 }),
      events[3], events[4],
      { type: 'TOOL_CALL_ARGS', toolCallId: 't1', delta: '{"a":1}' },
      events[8], events[9], events[10],
    ]);
    assertAguiEvents(compacted, 'compacted');
    assert.equal((await replayEquivalent(events, compacted)).equal, true);
  });

  test('merges never cross what could see the partial text, and never mix other fields', async () => {
    const events = [
      started('r1'),
      content('m1', 'a'),
      content('m1', 'b', { metadata: { source: 'x' } }),
      content('m1', 'c', { metadata: { source: 'x' } }),
      { type: 'MESSAGES_SNAPSHOT', messages: [{ id: 'm1', role: 'assistant', content: 'restated' }] },
      content('m1', 'd'),
      { type: 'TEXT_MESSAGE_CHUNK', messageId: 'm1', delta: 'e' },
      content('m1', 'f'),
      finished('r1'),
      content('m1', 'g'),
    ];
    const compacted = await compactEvents(events);
    assert.deepEqual(compacted.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => e.delta), ['a', 'bc', 'd', 'f', 'g']);
    assert.equal((await replayEquivalent(events, compacted)).equal, true);
  });

  test('per stretch between run boundaries, the state events fold into one snapshot where the stretch ends', async () => {
    const compacted = await compactEvents(BRANCHED);
    assert.deepEqual(compacted.map((e) => e.type), [
      'RUN_STARTED', 'STATE_SNAPSHOT', 'RUN_FINISHED',
      'RUN_STARTED', 'STATE_SNAPSHOT', 'RUN_FINISHED',
      'RUN_STARTED', 'STATE_SNAPSHOT', 'RUN_FINISHED',
    ]);
    const [r1, r2, r3] = compacted.filter((e) => e.type === 'STATE_SNAPSHOT');
    assert.deepEqual(plain(r2.snapshot), { run_log: ['a', 'b'], count: 1 }, 'r2 (only deltas) starts from the state r1 left');
    assert.deepEqual(plain(r3.snapshot), { run_log: ['a', 'c'] }, 'r3 starts from its parent r1, not from r2');
    assert.deepEqual(r1.metadata['agui-state-sync'], { seq: 1, epoch: 'e1', digest: stateDigest({ run_log: ['a'] }) });
    assert.deepEqual(r2.metadata['agui-state-sync'], { seq: 3, epoch: 'e1', digest: stateDigest({ run_log: ['a', 'b'], count: 1 }) });
    assert.equal(r3.metadata['agui-state-sync'].seq, 2);
    assertAguiEvents(compacted, 'compacted');
    assert.deepEqual(await replayEquivalent(BRANCHED, compacted), { equal: true, firstDifference: null });
  });

  test('metadata: other keys kept (later wins), baseSeq dropped, a numeric epoch stays a number; the fold writes version 2', async () => {
    const events = [
      snap({ n: 0 }, { seq: 5, epoch: 7, source: 'a' }),
      delta([add('/n', 1)], { seq: 6, baseSeq: 5, source: 'b', trace: 't' }),
    ];
    const [folded] = await compactEvents(events);
    assert.deepEqual(folded.metadata, { source: 'b', trace: 't', 'agui-state-sync': { seq: 6, epoch: 7, digest: stateDigest({ n: 1 }) } });
    // Version-2 events: their other wire fields (acks) stay under the key, a foreign top-level seq stays theirs.
    const acks = [{ editId: 'c:1', status: 'applied' }];
    const v2 = [
      snap({ n: 0 }, { 'agui-state-sync': { seq: 5, epoch: 'e' }, seq: 'theirs' }),
      delta([add('/n', 1)], { 'agui-state-sync': { seq: 6, baseSeq: 5, epoch: 'e', acks } }),
    ];
    const [fold2] = await compactEvents(v2);
    assert.deepEqual(fold2.metadata, { seq: 'theirs', 'agui-state-sync': { acks, seq: 6, epoch: 'e', digest: stateDigest({ n: 1 }) } });
  });

  test('a position the stream never verified stays unverified: plain and half-sequenced stretches fold without seq', async () => {
    const plainLog = [started('r1'), delta([add('/a', 1)]), finished('r1'), started('r2'), delta([add('/b', 2)]), finished('r2')];
    const compactedPlain = await compactEvents(plainLog);
    assert.deepEqual(compactedPlain.filter((e) => e.type === 'STATE_SNAPSHOT').map((e) => [plain(e.snapshot), e.metadata]), [[{ a: 1 }, undefined], [{ a: 1, b: 2 }, undefined]]);
    // A backend that numbers each run afresh (docs/wire.md section 6): seq 1, 2 in both runs.
    const half = [
      started('r1'), delta([add('/a', 1)], { seq: 1, baseSeq: 0 }), delta([add('/b', 1)], { seq: 2, baseSeq: 1 }), finished('r1'),
      started('r2'), delta([add('/c', 1)], { seq: 1, baseSeq: 0 }), finished('r2'),
    ];
    const compactedHalf = await compactEvents(half);
    assert.ok(compactedHalf.every((e) => e.type !== 'STATE_SNAPSHOT' || e.metadata === undefined), JSON.stringify(compactedHalf));
    assert.equal((await replayEquivalent(half, compactedHalf)).equal, true);
  });

  test('a state event that does not apply stops compaction with the engine\'s error, naming the event', async () => {
    const base = [started('r1'), snap({ list: [] }, { seq: 0, epoch: 'e1' })];
    await rejectsWith(compactEvents([...base, seqd([{ op: 'remove', path: '/missing' }], 1)]), 'patch-failed', /event 2 \(run "r1"\)/);
    await rejectsWith(compactEvents([...base, seqd([{ op: 'test', path: '/list', value: [1] }], 1)]), 'precondition-failed');
    await rejectsWith(compactEvents([...base, seqd([add('/x', 1)], 2)]), 'invalid-seq', /gap that never filled/);
    await rejectsWith(compactEvents([...base, delta([add('/x', 1)], { seq: 1, baseSeq: 0, epoch: 'e1', digest: stateDigest({ x: 2 }) })]), 'invalid-event', /digest-mismatch/);
    await rejectsWith(compactEvents([delta([{ op: 'replace', path: '/n', value: 1 }])]), 'patch-failed', /event 0:/);
    const error = await compactEvents([...base, seqd([add('/x', 1)], 1), seqd([{ op: 'remove', path: '/y' }], 2)]).catch((e) => e);
    assert.equal(error.index, 3);
  });

  test('a log that is not a log is refused', async () => {
    await assert.rejects(compactEvents({}), TypeError);
    await assert.rejects(compactEvents([], { initialState: {} }), { code: 'invalid-options' });
    await rejectsWith(compactEvents([started('r1'), started('r2', 'r9')]), 'invalid-event', /parentRunId "r9"/);
    await rejectsWith(compactEvents([started('r1'), started('r2'), started('r1')]), 'invalid-event', /starts again/);
    await rejectsWith(compactEvents([{ type: 'RUN_STARTED', threadId: 't' }]), 'invalid-event', /without a runId/);
    assert.deepEqual(await compactEvents([started('r1'), started('r1'), finished('r1')]), [started('r1'), started('r1'), finished('r1')], 'a restated RUN_STARTED continues its run');
  });
});

describe('replayEquivalent', () => {
  test('names the first difference: final state, a run, a message, a tool call, a log that does not replay', async () => {
    const same = await replayEquivalent(BRANCHED, BRANCHED);
    assert.deepEqual(same, { equal: true, firstDifference: null });
    const changed = structuredClone(BRANCHED);
    changed[9].delta[0].value = 'z';
    assert.deepEqual((await replayEquivalent(BRANCHED, changed)).firstDifference, { kind: 'state', path: '/run_log/1', a: 'c', b: 'z' });
    const r2Changed = structuredClone(BRANCHED);
    r2Changed[6].delta[0].value = 2;
    assert.deepEqual((await replayEquivalent(BRANCHED, r2Changed)).firstDifference, { kind: 'run', id: 'r2', path: '/count', a: 1, b: 2 });
    const withMessage = [...BRANCHED, content('m1', 'hi'), { type: 'TOOL_CALL_START', toolCallId: 't1', toolCallName: 'f' }, { type: 'TOOL_CALL_ARGS', toolCallId: 't1', delta: '{}' }];
    assert.deepEqual((await replayEquivalent(withMessage, BRANCHED)).firstDifference, { kind: 'message', id: 'm1', path: '', a: { role: 'assistant', content: 'hi' } });
    const otherText = withMessage.map((e) => (e.type === 'TEXT_MESSAGE_CONTENT' ? content('m1', 'ho') : e));
    assert.deepEqual((await replayEquivalent(withMessage, otherText)).firstDifference, { kind: 'message', id: 'm1', path: '/content', a: 'hi', b: 'ho' });
    const otherArgs = withMessage.map((e) => (e.type === 'TOOL_CALL_ARGS' ? { ...e, delta: '[]' } : e));
    assert.deepEqual((await replayEquivalent(withMessage, otherArgs)).firstDifference, { kind: 'tool-call', id: 't1', path: '/args', a: '{}', b: '[]' });
    const broken = [...BRANCHED.slice(0, 5), seqd([{ op: 'remove', path: '/nope' }], 2)];
    const verdict = await replayEquivalent(BRANCHED, broken);
    assert.equal(verdict.equal, false);
    assert.deepEqual({ ...verdict.firstDifference, message: undefined }, { kind: 'replay', side: 'b', code: 'patch-failed', index: 5, message: undefined });
  });
});

describe('stateAt / branchFrom', () => {
  test('stateAt follows parentRunId: the end of any run, or the first state event that reaches a seq', async () => {
    assert.deepEqual(plain(await stateAt(BRANCHED, { runId: 'r1' })), { run_log: ['a'] });
    assert.deepEqual(plain(await stateAt(BRANCHED, { runId: 'r2' })), { run_log: ['a', 'b'], count: 1 });
    assert.deepEqual(plain(await stateAt(BRANCHED, { runId: 'r3' })), { run_log: ['a', 'c'] });
    assert.deepEqual(plain(await stateAt(BRANCHED, { seq: 2 })), { run_log: ['a', 'b'] }, 'seq 2 of e1 is first reached in r2');
    assert.deepEqual(plain(await stateAt(BRANCHED, { seq: 2, runId: 'r3' })), { run_log: ['a', 'c'] }, 'within r3\'s lineage');
    assert.deepEqual(plain(await stateAt(BRANCHED, { seq: 0, epoch: 'e1' })), { run_log: [] });
    await rejectsWith(stateAt(BRANCHED, { seq: 2, epoch: 'e2' }), 'invalid-argument', /seq 2 of epoch "e2"/);
    await rejectsWith(stateAt(BRANCHED, { seq: 3, runId: 'r3' }), 'invalid-argument', /seq 3/);
    await rejectsWith(stateAt(BRANCHED, { runId: 'r9' }), 'invalid-argument', /no run "r9"/);
    await assert.rejects(stateAt(BRANCHED, {}), TypeError);
    await assert.rejects(stateAt(BRANCHED, { seq: -1 }), TypeError);
  });

  test('listRuns: the run history with its lineage, spans, seqs and endings, without a replay', () => {
    const runs = listRuns([...BRANCHED, started('r4', 'r3'), { type: 'RUN_ERROR', message: 'boom', code: 'X' }]);
    assert.deepEqual(runs.map((r) => [r.runId, r.parentRunId, r.branched, r.depth]), [
      ['r1', null, false, 0], ['r2', 'r1', false, 1], ['r3', 'r1', true, 1], ['r4', 'r3', true, 2],
    ]);
    assert.deepEqual(runs.map((r) => [r.startIndex, r.endIndex, r.eventCount, r.stateEvents]), [[0, 4, 4, 2], [4, 8, 4, 2], [8, 11, 3, 1], [11, 13, 2, 0]]);
    assert.deepEqual(runs.map((r) => [r.firstSeq, r.lastSeq, r.epoch, r.status]), [
      [0, 1, 'e1', 'finished'], [2, 3, 'e1', 'finished'], [2, 2, 'e1', 'finished'], [null, null, null, 'error'],
    ]);
    assert.deepEqual(runs[3].outcome, { type: 'error', message: 'boom', code: 'X' });
    const interrupted = listRuns([{ ...started('a'), input: { threadId: 't', runId: 'a', messages: [] } }, { type: 'STATE_DELTA', delta: [], seq: 7 }, { ...finished('a'), outcome: { type: 'interrupt', interrupts: [] } }]);
    assert.deepEqual([interrupted[0].lastSeq, interrupted[0].outcome, interrupted[0].input.runId], [7, { type: 'interrupt', interrupts: [] }, 'a'], 'top-level seq, the outcome, the echoed input');
    assert.deepEqual(listRuns([snap({})]), [], 'events before any run belong to no run');
    assert.throws(() => listRuns([started('a'), started('b', 'zz')]), (e) => e.code === 'invalid-event' && e.index === 1);
    assert.throws(() => listRuns({}), TypeError);
  });

  test('branchFrom: the lineage compacted, without the other branches, and what the new run needs', async () => {
    const branch = await branchFrom(BRANCHED, 'r3');
    assert.deepEqual({ ...branch, events: undefined, state: plain(branch.state) }, {
      events: undefined, threadId: 't', parentRunId: 'r3', state: { run_log: ['a', 'c'] }, seq: 2, epoch: 'e1',
    });
    assert.deepEqual(branch.events.filter((e) => e.type === 'RUN_STARTED').map((e) => e.runId), ['r1', 'r3']);
    assertAguiEvents(branch.events, 'branch');
    const lineage = BRANCHED.filter((_, i) => i < 4 || i >= 8);
    assert.deepEqual(await replayEquivalent(lineage, branch.events), { equal: true, firstDifference: null });
  });

  test('an emitter starts a branch from stateAt() with a new epoch; the log replays it and compacts', async () => {
    const from = await stateAt(BRANCHED, { runId: 'r3' });
    const emitter = await createStateEmitter({ initialState: from, epoch: 'branch-1', digestEvery: 1 });
    try {
      const next = { ...plain(from), run_log: [...from.run_log, 'd'], decided: true };
      const run = [started('r4', 'r3'), emitter.snapshot(), ...emitter.update(next), ...emitter.patch([add('/count', 9)]), finished('r4')];
      assertAguiEvents(run, 'emitter run');
      const thread = [...BRANCHED, ...run];
      assert.deepEqual(plain(await stateAt(thread, { runId: 'r4' })), { ...next, count: 9 });
      assert.deepEqual(plain(await stateAt(thread, { runId: 'r4' })), plain(emitter.state));
      assert.deepEqual(plain(await stateAt(thread, { seq: 0, epoch: 'branch-1' })), plain(from));
      const compacted = await compactEvents(thread);
      assert.equal((await replayEquivalent(thread, compacted)).equal, true);
      const folded = compacted.at(-2);
      assert.deepEqual(folded.metadata, { 'agui-state-sync': { seq: emitter.seq, epoch: 'branch-1', digest: stateDigest(emitter.state) } });
      // The same run appended to branchFrom()'s events: the branch stands alone.
      const branch = await branchFrom(BRANCHED, 'r3');
      assert.deepEqual(plain(await stateAt([...branch.events, ...run], { runId: 'r4' })), plain(emitter.state));
    } finally {
      emitter.dispose();
    }
  });
});
