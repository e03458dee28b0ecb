// The runs of a thread log as a list an app can draw: a run history with its
// lineage (which run each one started from), where each run ends, and what
// it says of itself. No replay: one pass over the events, no engine.
import { ROOT, scanRuns } from './runs.js';
import { checkEventArray } from './log-error.js';
import { hasWireKey, wireFields } from '../engine/wire-meta.js';

const STATE_TYPES = new Set(['STATE_SNAPSHOT', 'STATE_DELTA']);

// The position a state event claims: our wire fields (wire-meta.js), then,
// for an event without version-2 fields, the top-level seq / epoch some
// backends send.
function positionOf(event) {
  const fields = wireFields(event) ?? {};
  const top = hasWireKey(event) ? {} : event;
  const seq = Number.isSafeInteger(fields.seq) ? fields.seq : Number.isSafeInteger(top.seq) ? top.seq : null;
  const epoch = fields.epoch ?? top.epoch ?? null;
  return { seq, epoch: typeof epoch === 'string' || typeof epoch === 'number' ? epoch : null };
}

function newEntry(run, event) {
  return {
    runId: run.runId,
    threadId: run.threadId,
    parentRunId: run.parent === ROOT ? null : run.parent,
    branched: typeof event.parentRunId === 'string',
    depth: 0,
    startIndex: run.index,
    endIndex: run.index + 1,
    eventCount: 0,
    stateEvents: 0,
    firstSeq: null,
    lastSeq: null,
    epoch: null,
    status: 'running',
    outcome: null,
    input: event.input !== null && typeof event.input === 'object' ? event.input : null,
  };
}

function absorb(entry, event, index) {
  entry.eventCount++;
  entry.endIndex = index + 1;
  if (STATE_TYPES.has(event.type)) {
    entry.stateEvents++;
    const { seq, epoch } = positionOf(event);
    if (seq !== null) {
      if (entry.firstSeq === null) entry.firstSeq = seq;
      entry.lastSeq = seq;
    }
    if (epoch !== null) entry.epoch = epoch;
  } else if (event.type === 'RUN_FINISHED') {
    entry.status = 'finished';
    entry.outcome = event.outcome ?? null;
  } else if (event.type === 'RUN_ERROR') {
    entry.status = 'error';
    entry.outcome = { type: 'error', message: event.message ?? null, code: event.code ?? null };
  }
}

/**
 * The runs of `events` in log order, each with its lineage (`parentRunId`:
 * RUN_STARTED.parentRunId, else the run before it; null for the first;
 * `branched` when the log named it; `depth` in the tree), its span of the
 * log (`startIndex`, `endIndex`), the seqs its state events claim, and how
 * it ended (`status` 'running' | 'finished' | 'error', `outcome`). Throws a
 * LogError where the lineage is not a tree (as stateAt does).
 */
export function listRuns(events) {
  checkEventArray(events);
  const scan = scanRuns(events);
  const entries = new Map();
  let current = null;
  for (let i = 0; i < events.length; i++) {
    const start = scan.starts.get(i);
    if (start !== undefined) {
      current = newEntry(start, events[i]);
      if (current.parentRunId !== null) current.depth = entries.get(current.parentRunId).depth + 1;
      entries.set(start.runId, current);
    }
    if (current !== null) absorb(current, events[i], i);
  }
  return [...entries.values()];
}
