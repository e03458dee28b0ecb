// ag-ui-validate (PyPI, pinned in tests/frameworks/requirements.lock) on every
// other stream we send (issue 24, section 3; validate.test.mjs has the ones in
// front of the real frameworks): the Node emitter's (js/src/server/emitter.js),
// sequenceState()'s (js/src/ag-ui/sequence-state.js), the proxy's in front of
// each upstream shape the JS suites use (tests/support/upstreams.mjs: the docs'
// snapshot-then-deltas, snapshot-only, the seed article's top-level seq), and
// streams that include a resync: a catch-up snapshot answering a client's
// digest-mismatch, a replay answering a gap, and a run cut and resumed with
// Last-Event-ID from a position the proxy cannot continue (caught-up mode).
// Each capture is judged as a file: 0 errors, and every warning or info rule
// it reports is explained in docs/wire.md section 8 (quoted by id). No rule is
// switched off or re-graded.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { SHAPES } from '../support/upstreams.mjs';
import { CounterAgent, startSequencedServer } from '../js/ag-ui-support.mjs';
import { readStream, runInput, stack } from '../js/proxy-support.mjs';
import { repoRoot, validateCapture } from './support.mjs';

const { sequenceState } = await import(join(repoRoot, 'js', 'src', 'ag-ui.js'));
const { createStateEmitter, wireFields } = await import(join(repoRoot, 'js', 'src', 'index.js'));
const { catchUp } = await import(join(repoRoot, 'js', 'src', 'server.js'));
const WIRE = readFileSync(join(repoRoot, 'docs', 'wire.md'), 'utf8');
const SECTION_8 = WIRE.slice(WIRE.indexOf('## 8.'), WIRE.indexOf('## 9.'));
const dir = mkdtempSync(join(tmpdir(), 'agui-validate-streams-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const T = { timeout: 120000 };

/** Judges `bytes` (an SSE capture) as `name`: 0 errors; warnings and infos only of rules section 8 explains. */
function judged(t, name, bytes) {
  const file = join(dir, `${name}.sse`);
  writeFileSync(file, bytes);
  const { status, report } = validateCapture(file);
  const diagnostics = report?.diagnostics;
  assert.ok(Array.isArray(diagnostics), `${name}: no report from ag-ui-validate: ${JSON.stringify(report).slice(0, 300)}`);
  const lines = diagnostics.map((d) => `${d.rule} ${d.severity}${d.eventIndex >= 0 ? ` at event ${d.eventIndex} (${d.eventType})` : ''}: ${d.message}`);
  t.diagnostic(`${name}: ${lines.join('; ') || 'clean'}`);
  assert.deepEqual(diagnostics.filter((d) => d.severity === 'error').map((d) => d.rule), [], `${name}: errors\n${lines.join('\n')}`);
  assert.equal(status, 0, `${name}: ag-ui-validate exit ${status}\n${lines.join('\n')}`);
  for (const d of diagnostics) assert.ok(SECTION_8.includes(d.rule), `${name}: ${d.rule} (${d.severity}) is not explained in docs/wire.md section 8`);
  return diagnostics;
}

const started = (threadId, runId) => ({ type: 'RUN_STARTED', threadId, runId });
const finished = (threadId, runId) => ({ type: 'RUN_FINISHED', threadId, runId });
const text = (id, words) => [
  { type: 'TEXT_MESSAGE_START', messageId: id, role: 'assistant' },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta: words },
  { type: 'TEXT_MESSAGE_END', messageId: id },
];
const positionOf = (events) => {
  const last = events.map((e) => wireFields(e.data)).filter((fields) => Number.isSafeInteger(fields?.seq)).at(-1);
  return { lastSeq: last.seq, epoch: last.epoch };
};

describe('the Node emitter', () => {
  test('a run of updates, patches, text and a heartbeat; catch-ups that replay and that resync', T, async (t) => {
    const emitter = await createStateEmitter({ epoch: 'validate-emitter' });
    const brief = 'Plan the offsite step by step. '.repeat(6);
    const run1 = [started('t', 'r1'), ...emitter.update({ brief, steps: [], done: false }), ...text('m1', 'Planning.')];
    for (let i = 1; i <= 3; i++) run1.push(...emitter.patch([{ op: 'add', path: '/steps/-', value: { n: i } }]));
    run1.push(...emitter.update({ brief, steps: [{ n: 1 }, { n: 2 }, { n: 3 }], done: true }), finished('t', 'r1'));
    const bytes1 = run1.map((e) => emitter.encode(e)).join('') + emitter.heartbeat();
    judged(t, 'emitter-run', bytes1);
    const ask = (lastSeq, reason) => catchUp(emitter, { forwardedProps: { stateSync: { lastSeq, epoch: emitter.epoch, reason } } }).events;
    const replay = ask(emitter.seq - 2, 'gap');
    assert.ok(replay.length > 0 && replay.every((e) => e.type === 'STATE_DELTA'), 'a gap is answered with the missed deltas');
    const run2 = [started('t', 'r2'), ...replay, ...emitter.patch([{ op: 'replace', path: '/done', value: false }]), finished('t', 'r2')];
    judged(t, 'emitter-replay', run2.map((e) => emitter.encode(e)).join(''));
    const resync = ask(1, 'digest-mismatch');
    assert.equal(resync[0]?.type, 'STATE_SNAPSHOT', 'a digest mismatch is answered with a snapshot');
    const run3 = [started('t', 'r3'), ...resync, ...emitter.patch([{ op: 'replace', path: '/done', value: true }]), finished('t', 'r3')];
    judged(t, 'emitter-resync', run3.map((e) => emitter.encode(e)).join(''));
    judged(t, 'emitter-thread', [bytes1, ...[run2, run3].map((run) => run.map((e) => emitter.encode(e)).join(''))].join(''));
    emitter.dispose();
  });
});

describe('sequenceState()', () => {
  test('a first run, a run caught up by replay, a run that resyncs', T, async (t) => {
    const captures = []; // judged once the servers are closed: no idle keep-alive socket while the validator runs
    const middleware = sequenceState();
    // One middleware, so one thread: its first run goes to 3 items, the next (another agent server) to 6.
    const server = await startSequencedServer(middleware, new CounterAgent({ target: 3, stepMs: 1 }));
    const longer = await startSequencedServer(middleware, new CounterAgent({ target: 6, stepMs: 1 }));
    try {
      const url = server.url;
      const first = await readStream(url, { input: runInput('seq', 'r1', { state: { items: [] } }) });
      captures.push(['sequence-state-run', first.text]);
      const position = positionOf(first.events);
      const state = structuredClone(middleware.emitterFor('seq').state); // what a synced client holds
      const second = await readStream(longer.url, { input: runInput('seq', 'r2', { state, forwardedProps: { stateSync: { ...position } } }) });
      assert.ok(second.events.filter((e) => e.data.type === 'STATE_DELTA').length >= 3, 'the caught-up run goes on in deltas');
      captures.push(['sequence-state-caught-up', second.text]);
      const resync = await readStream(url, { input: runInput('seq', 'r3', { forwardedProps: { stateSync: { lastSeq: 1, epoch: position.epoch, reason: 'digest-mismatch' } } }) });
      assert.ok(resync.events.some((e) => e.data.type === 'STATE_SNAPSHOT'), 'the resync is answered with a snapshot');
      captures.push(['sequence-state-resync', resync.text]);
      captures.push(['sequence-state-thread', first.text + second.text + resync.text]);
    } finally {
      await server.close();
      await longer.close();
    }
    for (const [name, bytes] of captures) judged(t, name, bytes);
  });
});

describe('the proxy, in front of each upstream shape', () => {
  for (const shape of SHAPES) {
    test(`${shape}: two runs, a resync, and a run cut and resumed caught-up`, T, async (t) => {
      const captures = []; // judged once the proxy is closed: no idle keep-alive socket while the validator runs
      const s = await stack({ upstream: { shape, stepMs: 1 } });
      try {
        const first = await readStream(s.url(), { input: runInput('p', 'r1') });
        captures.push([`proxy-${shape}-run`, first.text]);
        const position = positionOf(first.events);
        const headers = { 'X-AGUI-State-Seq': String(position.lastSeq), 'X-AGUI-State-Epoch': position.epoch };
        const second = await readStream(s.url(), { input: runInput('p', 'r2'), headers });
        captures.push([`proxy-${shape}-second-run`, second.text]);
        captures.push([`proxy-${shape}-thread`, first.text + second.text]);
        const resync = await readStream(s.url(), { input: runInput('p', 'r3'), headers: { ...headers, 'X-AGUI-Resync-Reason': 'digest-mismatch' } });
        assert.equal(resync.events[1]?.data.type, 'STATE_SNAPSHOT', 'the resync snapshot right after RUN_STARTED');
        captures.push([`proxy-${shape}-resync`, resync.text]);
        // Cut after a few events, resumed from a position the run never had: the catch-up, then the rest.
        const cut = await readStream(s.url(), { input: runInput('p', 'r4'), stop: (events) => events.length >= 4 });
        const lastId = cut.events.at(-1).id;
        const rest = await readStream(s.url(), { method: 'GET', headers: { 'Last-Event-ID': lastId, ...headers, 'X-AGUI-Resync-Reason': 'digest-mismatch' } });
        assert.equal(rest.headers.get('x-agui-resume'), 'caught-up');
        assert.equal(rest.events.find((e) => e.data.type.startsWith('STATE_'))?.data.type, 'STATE_SNAPSHOT', 'the resumed stream resyncs with a snapshot');
        captures.push([`proxy-${shape}-cut-and-caught-up`, cut.text + rest.text]);
      } finally {
        await s.close();
      }
      for (const [name, bytes] of captures) judged(t, name, bytes);
    });
  }
});
