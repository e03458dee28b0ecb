// compactEvents against the real @ag-ui/client compactEvents (devDependency,
// not copied): on every random thread where theirs is correct (its output
// replays like the original through the engine), ours must replay like
// theirs and merge text and tool-call arguments exactly as theirs does; where
// theirs is not correct, ours still is, and the reasons are counted. Then the
// cases by hand: #1720 (a run with only deltas), a delta that does not apply
// (theirs swallows it), a delta logged twice, a digest that no longer fits.
//
// Threads come from log-support.mjs randomThread(seed, { agui: true }): the
// features where our merging differs by design (chunk metadata, *_CHUNK,
// MESSAGES_SNAPSHOT, messages left open) are left out.
// LOG_DIFF_SEEDS=n runs seeds 1..n (default 300).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { assertAguiEvents, MODES, randomThread } from './log-support.mjs';
import { jsDir, pkg, plain } from './support.mjs';

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true'; // theirs warns where it swallows a failed patch
const { compactEvents: theirCompactEvents } = await import('@ag-ui/client');
const { compactEvents, replayEquivalent } = await import(join(jsDir, 'src', 'log.js'));
const { stateDigest } = pkg;

const theirs = (events) => theirCompactEvents(structuredClone(events));
const isState = (e) => e.type === 'STATE_SNAPSHOT' || e.type === 'STATE_DELTA';

// The merged streams, as comparable rows: theirs drops a chunk's timestamp, ours keeps the first one's.
function mergedRows(events) {
  return events
    .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT' || e.type === 'TOOL_CALL_ARGS')
    .map((e) => JSON.stringify([e.type, e.messageId ?? e.toolCallId, e.delta, e.metadata ?? null]))
    .sort();
}

// Every other event that is not state, as a sorted multiset (theirs moves events out of message blocks; ours does not).
function otherRows(events) {
  return events.filter((e) => !isState(e) && e.type !== 'TEXT_MESSAGE_CONTENT' && e.type !== 'TOOL_CALL_ARGS').map((e) => JSON.stringify(e)).sort();
}

function reasonOf(difference) {
  return difference.kind === 'replay' ? `replay ${difference.code}` : difference.kind;
}

async function compare(thread, tally) {
  const ours = await compactEvents(thread.events);
  const their = theirs(thread.events);
  assertAguiEvents(ours, 'ours');
  const theirVerdict = await replayEquivalent(thread.events, their);
  if (!theirVerdict.equal) {
    const reason = `${thread.mode}: ${reasonOf(theirVerdict.firstDifference)}`;
    tally.incorrect[reason] = (tally.incorrect[reason] ?? 0) + 1;
    assert.deepEqual(await replayEquivalent(thread.events, ours), { equal: true, firstDifference: null }, 'ours is correct where theirs is not');
    return;
  }
  tally.correct[thread.mode]++;
  assert.deepEqual(await replayEquivalent(their, ours), { equal: true, firstDifference: null }, 'ours replays like theirs');
  assert.deepEqual(mergedRows(ours), mergedRows(their), 'text and arguments merged as theirs merges them');
  assert.deepEqual(otherRows(ours), otherRows(their), 'the same other events');
  const ourState = ours.filter(isState).length;
  const theirState = their.filter(isState).length;
  assert.ok(ourState <= theirState, `ours keeps ${ourState} state events, theirs ${theirState}`);
  tally.stateEvents.ours += ourState;
  tally.stateEvents.theirs += theirState;
}

test('differential: ours replays like @ag-ui/client compactEvents wherever theirs is correct (seeded)', { timeout: 300000 }, async (t) => {
  const last = Number(process.env.LOG_DIFF_SEEDS ?? 300);
  const tally = { correct: Object.fromEntries(MODES.map((m) => [m, 0])), incorrect: {}, stateEvents: { ours: 0, theirs: 0 } };
  for (let seed = 1; seed <= last; seed++) {
    const thread = randomThread(seed, { agui: true });
    try {
      await compare(thread, tally);
    } catch (error) {
      error.message = `seed ${seed} (${thread.mode}; randomThread(${seed}, { agui: true })): ${error.message}`;
      throw error;
    }
  }
  t.diagnostic(`theirs correct: ${JSON.stringify(tally.correct)}; incorrect: ${JSON.stringify(tally.incorrect)}; state events where both are correct: ${JSON.stringify(tally.stateEvents)}`);
  if (last >= 100) {
    assert.ok(MODES.every((m) => tally.correct[m] > 0), 'every mode has cases where theirs is correct');
    assert.ok(tally.stateEvents.ours < tally.stateEvents.theirs, 'ours folds what theirs leaves as deltas');
  }
});

const started = (runId) => ({ type: 'RUN_STARTED', threadId: 't', runId });
const finished = (runId) => ({ type: 'RUN_FINISHED', threadId: 't', runId });
const append = (value, metadata) => ({ type: 'STATE_DELTA', delta: [{ op: 'add', path: '/run_log/-', value }], ...(metadata ? { metadata } : {}) });

describe('where @ag-ui/client differs', () => {
  // The shape of ag-ui-protocol/ag-ui#1720: run 1 establishes /run_log, run 2 only appends.
  const issue1720 = [
    started('r1'), { type: 'STATE_SNAPSHOT', snapshot: { run_log: [] } }, append('a'), finished('r1'),
    started('r2'), append('b'), append('c'), finished('r2'),
  ];

  test('#1720: a run with only deltas is folded from the state run 1 left, not {} (theirs leaves its deltas unfolded)', async () => {
    const ours = await compactEvents(issue1720);
    const their = theirs(issue1720);
    const run2 = (events) => events.slice(events.findIndex((e) => e.type === 'RUN_STARTED' && e.runId === 'r2'));
    assert.deepEqual(run2(their).map((e) => e.type), ['RUN_STARTED', 'STATE_DELTA', 'STATE_DELTA', 'RUN_FINISHED'], 'theirs: run 2 keeps its deltas');
    assert.deepEqual(run2(ours).map((e) => e.type), ['RUN_STARTED', 'STATE_SNAPSHOT', 'RUN_FINISHED'], 'ours: run 2 is one snapshot');
    assert.deepEqual(plain(run2(ours)[1].snapshot), { run_log: ['a', 'b', 'c'] });
    // Both replay like the original here; only ours makes run 2 stand alone.
    assert.equal((await replayEquivalent(issue1720, their)).equal, true);
    assert.equal((await replayEquivalent(issue1720, ours)).equal, true);
    const alone = await replayEquivalent(run2(issue1720), run2(ours));
    assert.equal(alone.firstDifference.kind, 'replay', 'run 2\'s deltas folded from {} cannot apply (what #1720 reports)');
    assert.equal(alone.firstDifference.code, 'patch-failed');
    assert.equal(alone.firstDifference.side, 'a');
    assertAguiEvents(ours, 'ours');
  });

  test('a delta that does not apply: theirs swallows it into a wrong snapshot, ours stops with patch-failed', async () => {
    const events = [started('r1'), { type: 'STATE_SNAPSHOT', snapshot: { run_log: [] } }, { type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/missing', value: 1 }] }, append('a'), finished('r1')];
    const their = theirs(events);
    assert.deepEqual(their.find((e) => e.type === 'STATE_SNAPSHOT').snapshot, { run_log: ['a'] }, 'theirs: as if the failed delta never was');
    assert.equal((await replayEquivalent(events, their)).firstDifference.kind, 'replay', 'the original does not replay');
    await assert.rejects(compactEvents(events), { code: 'patch-failed', index: 2 });
  });

  test('a delta logged twice (a replayed event): theirs applies it twice, ours as the engine does, once', async () => {
    const events = [
      started('r1'), { type: 'STATE_SNAPSHOT', snapshot: { run_log: [] }, metadata: { seq: 0, epoch: 'e' } },
      append('a', { seq: 1, baseSeq: 0, epoch: 'e' }), append('a', { seq: 1, baseSeq: 0, epoch: 'e' }), finished('r1'),
    ];
    assert.deepEqual(theirs(events).find((e) => e.type === 'STATE_SNAPSHOT').snapshot, { run_log: ['a', 'a'] });
    const ours = await compactEvents(events);
    assert.deepEqual(plain(ours.find((e) => e.type === 'STATE_SNAPSHOT').snapshot), { run_log: ['a'] });
    assert.equal((await replayEquivalent(events, ours)).equal, true);
  });

  test('metadata: theirs merges it (an older digest, a baseSeq on a snapshot); ours states the folded position', async () => {
    const events = [
      started('r1'),
      { type: 'STATE_SNAPSHOT', snapshot: { run_log: [] }, metadata: { seq: 0, epoch: 'e', digest: stateDigest({ run_log: [] }) } },
      append('a', { seq: 1, baseSeq: 0, epoch: 'e' }),
      finished('r1'),
    ];
    const theirSnapshot = theirs(events).find((e) => e.type === 'STATE_SNAPSHOT');
    assert.deepEqual(theirSnapshot.metadata, { seq: 1, baseSeq: 0, epoch: 'e', digest: stateDigest({ run_log: [] }) });
    const verdict = await replayEquivalent(events, theirs(events));
    assert.equal(verdict.firstDifference.kind, 'replay');
    assert.match(verdict.firstDifference.message, /digest-mismatch/);
    const ours = await compactEvents(events);
    assert.deepEqual(ours.find((e) => e.type === 'STATE_SNAPSHOT').metadata, { 'agui-state-sync': { seq: 1, epoch: 'e', digest: stateDigest({ run_log: ['a'] }) } });
    assert.equal((await replayEquivalent(events, ours)).equal, true);
  });
});
