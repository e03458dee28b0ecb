// The run history under the panes (time travel): the thread's log as the
// agent wrote it (GET /log, JSON Lines), its runs and their lineage
// (listRuns), and the state at the end of a picked run, replayed from the
// log through the engine (stateAt). The page reads what it lacks when the
// server says the log grew (truth.logLength), one read at a time.
import { listRuns, parseLog, stateAt, stateDigest } from './pkg.js';
import { store } from './store.js';

// Lanes for the drawing, as a git graph has them: a run's first child stays
// in its lane (the thread going on); every later child, a branch, opens a new one.
export function laneRuns(runs) {
  const lane = new Map();
  const continued = new Set();
  let lanes = 0;
  return runs.map((run) => {
    let at;
    if (run.parentRunId !== null && lane.has(run.parentRunId) && !continued.has(run.parentRunId)) {
      at = lane.get(run.parentRunId);
      continued.add(run.parentRunId);
    } else {
      at = lanes; // the first run, or a branch: a new lane
    }
    lanes = Math.max(lanes, at + 1);
    lane.set(run.runId, at);
    return { ...run, lane: at };
  });
}

/** The runIds from the first run down to `runId`. */
export function lineageOf(runs, runId) {
  const byId = new Map(runs.map((r) => [r.runId, r]));
  const chain = new Set();
  for (let r = byId.get(runId); r; r = r.parentRunId === null ? null : byId.get(r.parentRunId)) chain.add(r.runId);
  return chain;
}

export function createRunHistory({ threadId }) {
  const view = store({ runs: [], logLength: 0, error: null, picked: null });
  let events = [];
  let reading = null;
  let pickToken = 0;

  // Reads what the page does not have yet (from=<events it has>); a log
  // shorter than that (the server forgot the thread) is read again whole.
  async function read(logLength) {
    const from = logLength < events.length ? 0 : events.length;
    const res = await fetch(`/log?threadId=${encodeURIComponent(threadId)}&from=${from}`, { cache: 'no-store' });
    if (!res.ok) throw new Error(`GET /log: ${res.status}`);
    events = [...(from === 0 ? [] : events), ...parseLog(await res.text())];
    const runs = laneRuns(listRuns(events));
    view.set((v) => ({ ...v, runs, logLength: events.length, error: null }));
    const picked = view.get().picked;
    // The picked run is still going: its end moved.
    if (picked && runs.some((r) => r.runId === picked.runId && r.endIndex !== picked.endIndex)) await pick(picked.runId, picked.seq);
  }

  // Re-reads the log when it grew past what was read (truth.logLength).
  function sync(logLength) {
    if (reading || typeof logLength !== 'number' || logLength === view.get().logLength) return reading;
    reading = read(logLength)
      .catch((err) => view.set((v) => ({ ...v, error: err.message || String(err) })))
      .finally(() => { reading = null; });
    return reading;
  }

  // The state at the end of `runId` (so far, while it runs), or right after
  // its state event that reached `seq` (time travel inside the run), replayed
  // from the log through the engine.
  async function pick(runId, seq = null) {
    const token = ++pickToken;
    const runs = view.get().runs;
    const run = runs.find((r) => r.runId === runId);
    if (!run) return;
    const lineage = lineageOf(runs, runId);
    const replayed = runs.filter((r) => lineage.has(r.runId)).reduce((n, r) => n + r.eventCount, 0);
    const at = seq === null || seq === run.lastSeq ? null : seq;
    const point = at === null ? { runId } : { runId, seq: at, ...(run.epoch === null ? {} : { epoch: run.epoch }) };
    const base = { runId, seq: at, endIndex: run.endIndex, replayed };
    try {
      const state = await stateAt(events, point);
      if (token !== pickToken) return;
      view.set((v) => ({ ...v, picked: { ...base, state, digest: stateDigest(state), error: null } }));
    } catch (err) {
      if (token !== pickToken) return;
      view.set((v) => ({ ...v, picked: { ...base, state: null, digest: null, error: `${err.code || 'error'}: ${err.message}` } }));
    }
  }

  return { view, sync, pick, get events() { return events; } };
}
