// agui-state-sync/log under random threads (log-support.mjs randomThread):
// plain, sequenced (with a delta logged twice and deltas swapped) and
// half-sequenced streams, 2..7 runs, a third of them branching from an
// earlier run with parentRunId, text, tool calls, RUN_ERROR, state after
// RUN_FINISHED. For every thread:
//  1. the input and every produced event are valid @ag-ui/core events;
//  2. compactEvents(log) is replayEquivalent to the log (final state, the
//     state at the end of every run, messages, tool calls), is no longer, and
//     compacting it again changes nothing;
//  3. stateAt({ runId }) of the log and of the compacted log is the
//     generator's model state at that run's end (the model replays the
//     lineage with its own JSON Patch code), for every run;
//  4. stateAt({ seq, epoch }) (and within a run's lineage) is the model's;
//  5. branchFrom(run) replays to the model's state on its own;
//  6. the check has teeth: the compacted log with one folded snapshot changed
//     is not equivalent.
//
// LOG_SEED=n runs one thread, LOG_SEEDS=n runs seeds 1..n (default 250).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertAguiEvents, Chooser, MODES, randomThread } from './log-support.mjs';
import { jsDir, pkg, plain } from './support.mjs';

const { branchFrom, compactEvents, listRuns, replayEquivalent, stateAt } = await import(join(jsDir, 'src', 'log.js'));
await pkg.initEngine();

function seeds() {
  const only = process.env.LOG_SEED;
  if (only) return [Number(only), Number(only)];
  return [1, Number(process.env.LOG_SEEDS ?? 250)];
}

async function checkCompaction(thread, tally) {
  const compacted = await compactEvents(thread.events);
  assertAguiEvents(compacted, 'compacted');
  const verdict = await replayEquivalent(thread.events, compacted);
  assert.deepEqual(verdict, { equal: true, firstDifference: null }, 'compacted log replays the same');
  assert.ok(compacted.length <= thread.events.length);
  assert.deepEqual(plain(await compactEvents(compacted)), plain(compacted), 'compaction is idempotent');
  tally.events += thread.events.length;
  tally.compacted += compacted.length;
  return compacted;
}

async function checkRuns(thread, compacted) {
  // listRuns draws the same tree without replaying, from either log.
  for (const events of [thread.events, compacted]) {
    const listed = listRuns(events);
    assert.deepEqual(listed.map((r) => r.runId), thread.order, 'listRuns: log order');
    assert.deepEqual(listed.map((r) => r.parentRunId), thread.order.map((runId) => thread.parents.get(runId)), 'listRuns: lineage');
  }
  for (const runId of thread.order) {
    const expected = thread.endState(runId);
    assert.deepEqual(plain(await stateAt(thread.events, { runId })), expected, `stateAt ${runId}`);
    assert.deepEqual(plain(await stateAt(compacted, { runId })), expected, `stateAt ${runId} of the compacted log`);
  }
}

async function checkSeqs(thread, c) {
  if (thread.points.length === 0) return 0;
  for (let n = 0; n < 3; n++) {
    const { seq, epoch } = c.pick(thread.points);
    const at = thread.mode === 'sequenced' ? { seq, epoch } : { seq };
    assert.deepEqual(plain(await stateAt(thread.events, at)), thread.expectedAtSeq(seq, at.epoch), `stateAt ${JSON.stringify(at)}`);
    const runId = c.pick(thread.order);
    const expected = thread.expectedAtSeq(seq, at.epoch, runId);
    const within = stateAt(thread.events, { ...at, runId });
    if (expected === undefined) await assert.rejects(within, { code: 'invalid-argument' });
    else assert.deepEqual(plain(await within), expected, `stateAt ${JSON.stringify({ ...at, runId })}`);
  }
  return 1;
}

async function checkBranch(thread, c) {
  const runId = c.pick(thread.order);
  const branch = await branchFrom(thread.events, runId);
  assertAguiEvents(branch.events, 'branch');
  assert.deepEqual(plain(branch.state), thread.endState(runId));
  assert.deepEqual(plain(await stateAt(branch.events, { runId })), thread.endState(runId));
}

// The last folded snapshot (so the last one of its run) with one more key
// must be caught: by the engine's digest check where it has a digest, else
// as a different state.
async function checkTeeth(thread, compacted) {
  const at = compacted.findLastIndex((e) => e.type === 'STATE_SNAPSHOT');
  if (at === -1) return 0;
  const changed = compacted.slice();
  changed[at] = { ...changed[at], snapshot: { ...changed[at].snapshot, tampered: true } };
  const verdict = await replayEquivalent(thread.events, changed);
  assert.equal(verdict.equal, false, 'a changed snapshot is noticed');
  const kinds = changed[at].metadata?.['agui-state-sync']?.digest === undefined ? ['state', 'run'] : ['replay'];
  assert.ok(kinds.includes(verdict.firstDifference.kind), JSON.stringify(verdict.firstDifference));
  return 1;
}

test('log property: compactEvents is replayEquivalent, stateAt matches the lineage model (seeded)', { timeout: 300000 }, async (t) => {
  const [first, last] = seeds();
  const started = performance.now();
  const tally = { threads: 0, events: 0, compacted: 0, branches: 0, duplicated: 0, swapped: 0, seqChecks: 0, teeth: 0, modes: Object.fromEntries(MODES.map((m) => [m, 0])) };
  for (let seed = first; seed <= last; seed++) {
    const thread = randomThread(seed);
    const c = new Chooser(seed * 7919);
    try {
      assertAguiEvents(thread.events, 'generated');
      const compacted = await checkCompaction(thread, tally);
      await checkRuns(thread, compacted);
      tally.seqChecks += await checkSeqs(thread, c);
      await checkBranch(thread, c);
      tally.teeth += await checkTeeth(thread, compacted);
      tally.threads++;
      tally.modes[thread.mode]++;
      tally.duplicated += thread.faults.duplicated;
      tally.swapped += thread.faults.swapped;
      tally.branches += thread.events.filter((e) => e.type === 'RUN_STARTED' && e.parentRunId !== undefined).length;
    } catch (error) {
      error.message = `seed ${seed} (${thread.mode}; LOG_SEED=${seed} to replay): ${error.message}`;
      throw error;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  t.diagnostic(`${tally.threads} threads in ${seconds.toFixed(1)} s: ${JSON.stringify(tally)}`);
  if (last - first >= 100) {
    assert.ok(tally.branches > 0 && tally.duplicated > 0 && tally.swapped > 0 && tally.seqChecks > 0 && tally.teeth > 0, JSON.stringify(tally));
  }
});
