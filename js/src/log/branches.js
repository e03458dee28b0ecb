// Time travel over a thread log: the state at the end of any run, or at any
// seq, and the log a new branch starts from.
import { syncError } from '../engine/errors.js';
import { compactLog } from './compact.js';
import { argumentError, checkEventArray } from './log-error.js';
import { logOptions } from './options.js';
import { LineageReplayer } from './replayer.js';
import { lineageEvents, scanRuns } from './runs.js';

function knownRun(scan, runId) {
  if (typeof runId !== 'string') throw argumentError('runId must be a string');
  if (!scan.runs.has(runId)) throw syncError('invalid-argument', `no run ${JSON.stringify(runId)} starts in the log`);
}

// The lineage of `runId` alone, replayed as a straight line (its runs follow
// each other): the engine's exact behaviour, with no restore in between.
async function lineageEnd(events, scan, runId, options) {
  const lineage = lineageEvents(events, scan, runId);
  const replayer = await LineageReplayer.create(options);
  try {
    const lineageScan = scanRuns(lineage);
    for (let i = 0; i < lineage.length; i++) {
      const run = lineageScan.starts.get(i);
      if (run !== undefined) await replayer.enterRun(run, i);
      replayer.feed(lineage[i], i);
    }
    replayer.finish();
    return replayer.position();
  } finally {
    replayer.dispose();
  }
}

// The state right after the first state event that brings the engine to
// `seq` (and `epoch`, when given), in log order.
async function stateAtSeq(events, scan, { seq, epoch }, options) {
  const replayer = await LineageReplayer.create(options);
  try {
    for (let i = 0; i < events.length; i++) {
      const run = scan.starts.get(i);
      if (run !== undefined) await replayer.enterRun(run, i);
      for (const outcome of replayer.feed(events[i], i)) {
        if (outcome.kind !== 'applied' || outcome.seq !== seq) continue;
        if (epoch === undefined || String(replayer.position().epoch) === String(epoch)) return outcome.state;
      }
    }
  } finally {
    replayer.dispose();
  }
  const of = epoch === undefined ? '' : ` of epoch ${JSON.stringify(epoch)}`;
  throw syncError('invalid-argument', `no state event in the log reaches seq ${seq}${of}`);
}

function checkTarget(target) {
  if (target === null || typeof target !== 'object') throw argumentError('stateAt() takes { runId } or { seq, epoch?, runId? }');
  if (target.seq === undefined) return;
  if (!Number.isSafeInteger(target.seq) || target.seq < 0) throw argumentError('seq must be an integer >= 0');
}

/**
 * The state at the end of run `runId` (its lineage replayed: root, ancestors,
 * the run), or right after the first state event that reaches `seq` (of
 * `epoch`; within `runId`'s lineage when given).
 */
export async function stateAt(events, target, options) {
  checkEventArray(events);
  checkTarget(target);
  const engineOptions = logOptions(options);
  const scan = scanRuns(events);
  if (target.runId !== undefined) knownRun(scan, target.runId);
  if (target.seq === undefined) {
    if (target.runId === undefined) throw argumentError('stateAt() takes { runId } or { seq, epoch?, runId? }');
    return (await lineageEnd(events, scan, target.runId, engineOptions)).state;
  }
  const searched = target.runId === undefined ? events : lineageEvents(events, scan, target.runId);
  const searchedScan = target.runId === undefined ? scan : scanRuns(searched);
  return stateAtSeq(searched, searchedScan, target, engineOptions);
}

/**
 * What a new branch from the end of run `runId` starts from: `events`, the
 * run's lineage compacted (every other branch left out; replaying it gives
 * the run's state, messages and tool calls), and what the new run needs:
 * RUN_STARTED { threadId, runId: <new>, parentRunId }, and `state`, `seq`,
 * `epoch` for an emitter that continues from there (createStateEmitter({
 * initialState: state, epoch: <new> })).
 */
export async function branchFrom(events, runId, options) {
  checkEventArray(events);
  const engineOptions = logOptions(options);
  const scan = scanRuns(events);
  knownRun(scan, runId);
  const { events: compacted, position } = await compactLog(lineageEvents(events, scan, runId), engineOptions);
  return {
    events: compacted,
    threadId: scan.runs.get(runId).threadId,
    parentRunId: runId,
    state: position.state,
    seq: position.verified ? position.seq : null,
    epoch: position.verified ? position.epoch : null,
  };
}
