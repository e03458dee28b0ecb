// replayEquivalent(a, b): do two logs replay to the same thing?
//
// Each log is replayed through the engine (replayer.js, every event fed to a
// real StateSync, following the run lineage), and these are compared, in
// this order; the first difference is reported:
//  1. 'state':     the state at the end of the log;
//  2. 'run':       the state at the end of every run, by runId (a run only
//                  one log has is a difference too);
//  3. 'message':   every message by id: role and full content;
//  4. 'tool-call': every tool call by id: name, parent message, full args.
// A log the engine cannot replay (a patch that fails, a gap, ...) is a
// difference of kind 'replay' with the engine's error code and message.
import { AguiSyncError } from '../engine/errors.js';
import { firstDifference } from './json-diff.js';
import { checkEventArray } from './log-error.js';
import { logOptions } from './options.js';
import { LineageReplayer } from './replayer.js';
import { scanRuns } from './runs.js';
import { Transcript } from './transcript.js';

/** Replays `events`: { final, runs: Map<runId, state>, messages, toolCalls }. Throws where the engine would not apply. */
export async function replayLog(events, options) {
  const scan = scanRuns(events);
  const replayer = await LineageReplayer.create(options);
  try {
    const transcript = new Transcript();
    for (let i = 0; i < events.length; i++) {
      const run = scan.starts.get(i);
      if (run !== undefined) await replayer.enterRun(run, i);
      for (const outcome of replayer.feed(events[i], i)) {
        if (outcome.kind === 'event') transcript.apply(outcome.event);
      }
    }
    replayer.finish();
    const runs = new Map(scan.order.map((runId) => [runId, replayer.endOf(runId).state]));
    return { final: replayer.position().state, runs, ...transcript.result() };
  } finally {
    replayer.dispose();
  }
}

async function replayOrFailure(events, side, options) {
  try {
    return { replay: await replayLog(events, options) };
  } catch (error) {
    if (!(error instanceof AguiSyncError) || error instanceof TypeError) throw error;
    const failure = { kind: 'replay', side, code: error.code, message: error.message };
    if (error.index !== undefined) failure.index = error.index;
    return { failure };
  }
}

// The first difference between two Maps of JSON values, keys in a's order then b's.
function firstEntryDifference(kind, a, b) {
  for (const [id, value] of a) {
    const found = firstDifference(value, b.get(id));
    if (found !== null) return { kind, id, ...found };
  }
  for (const [id, value] of b) {
    if (!a.has(id)) return { kind, id, path: '', b: value };
  }
  return null;
}

function compareReplays(a, b) {
  const state = firstDifference(a.final, b.final);
  if (state !== null) return { kind: 'state', ...state };
  return firstEntryDifference('run', a.runs, b.runs)
    ?? firstEntryDifference('message', a.messages, b.messages)
    ?? firstEntryDifference('tool-call', a.toolCalls, b.toolCalls);
}

/** { equal, firstDifference } of two logs (event arrays) replayed through the engine. */
export async function replayEquivalent(a, b, options) {
  checkEventArray(a, 'replayEquivalent(a, b): a');
  checkEventArray(b, 'replayEquivalent(a, b): b');
  const engineOptions = logOptions(options);
  const left = await replayOrFailure(a, 'a', engineOptions);
  const right = left.failure ? null : await replayOrFailure(b, 'b', engineOptions);
  const found = left.failure ?? right.failure ?? compareReplays(left.replay, right.replay);
  return { equal: found === null, firstDifference: found };
}
