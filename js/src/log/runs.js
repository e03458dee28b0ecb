// Runs and their lineage in a thread log.
//
// A run owns every event from its RUN_STARTED up to the next run's
// RUN_STARTED (so state events a backend sends after RUN_FINISHED still
// belong to the run they followed); events before the first run belong to
// the root (key ROOT). A run starts from the state its parent ended with:
// RUN_STARTED.parentRunId when it has one (AG-UI's branching, "time
// travel"), otherwise the run before it in the log. The parent must start
// earlier in the log, which makes the lineage a tree walked in log order.
import { checkEvent, logError } from './log-error.js';

/** The lineage key of the events before the first run. */
export const ROOT = null;

// A RUN_STARTED repeated for the run in progress (a resumed stream restating
// it) continues that run; any other repeat makes the log ambiguous.
function restated(runs, runId, current, index) {
  if (!runs.has(runId)) return false;
  if (runId === current) return true;
  throw logError('invalid-event', `event ${index}: run ${JSON.stringify(runId)} starts again after another run`, { index });
}

function parentOf(event, runs, current, index) {
  const explicit = event.parentRunId;
  if (explicit === undefined || explicit === null) return current;
  if (typeof explicit !== 'string' || !runs.has(explicit)) {
    throw logError('invalid-event', `event ${index}: parentRunId ${JSON.stringify(explicit)} names no run started earlier in the log`, { index });
  }
  return explicit;
}

/**
 * Checks every event (an object with a type) and maps the runs:
 * { runs: Map<runId, Run>, starts: Map<index of its RUN_STARTED, Run>, order: runIds },
 * Run = { runId, parent (runId or ROOT), threadId (or null), index }.
 */
export function scanRuns(events) {
  const runs = new Map();
  const starts = new Map();
  let current = ROOT;
  for (let i = 0; i < events.length; i++) {
    const event = events[i];
    checkEvent(event, i);
    if (event.type !== 'RUN_STARTED') continue;
    const { runId } = event;
    if (typeof runId !== 'string' || runId === '') {
      throw logError('invalid-event', `event ${i}: RUN_STARTED without a runId`, { index: i });
    }
    if (restated(runs, runId, current, i)) continue;
    const run = { runId, parent: parentOf(event, runs, current, i), threadId: typeof event.threadId === 'string' ? event.threadId : null, index: i };
    runs.set(runId, run);
    starts.set(i, run);
    current = runId;
  }
  return { runs, starts, order: [...runs.keys()] };
}

/** The runIds from the root's first run down to `runId` (a Set, in lineage order). */
export function lineageOf(scan, runId) {
  const chain = [];
  for (let key = runId; key !== ROOT; key = scan.runs.get(key).parent) chain.push(key);
  return new Set(chain.reverse());
}

/**
 * The events of `runId`'s lineage, in log order: the root's, then those of
 * each run from the first ancestor down to `runId` itself; every other
 * branch left out. Each kept run's parent is the kept run before it.
 */
export function lineageEvents(events, scan, runId) {
  const keep = lineageOf(scan, runId);
  const out = [];
  let owner = ROOT;
  for (let i = 0; i < events.length; i++) {
    const start = scan.starts.get(i);
    if (start !== undefined) owner = start.runId;
    if (owner === ROOT || keep.has(owner)) out.push(events[i]);
  }
  return out;
}
