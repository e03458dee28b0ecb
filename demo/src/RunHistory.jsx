// Time travel: the thread's runs as the agent logged them, with their lineage
// drawn, and the state at the end of the picked run, replayed from the log
// (agui-state-sync/log's listRuns and stateAt). "Branch from here" starts a
// new run whose parentRunId is the picked run: the agent starts again from
// that run's end state, in a new epoch, and the panes follow it.
import { useSyncExternalStore } from 'react';

import { useAgentState } from './pkg.js';
import { lineageOf } from './history.js';
import { money, StateView } from './StateView.jsx';

const useStore = (s) => useSyncExternalStore(s.subscribe, s.get, s.get);
const ROW = 30;
const LANE = 22;
const short = (d) => (d ? d.replace('sha256:', '').slice(0, 10) : '...');

export function RunHistory({ session }) {
  const h = useStore(session.runHistory.view);
  const truth = useStore(session.truth);
  const running = useStore(session.running);
  useAgentState(session.sync); // pending edits change with the state
  const pickedId = h.picked ? h.picked.runId : null;
  const lineage = pickedId ? lineageOf(h.runs, pickedId) : new Set();
  return (
    <section className="history card" data-testid="run-history" data-count={h.runs.length}>
      <h3>Run history <span className="muted">(time travel: the thread's log as the agent wrote it, GET /log; pick a run to see its state)</span></h3>
      {h.error && <div className="warn small" data-testid="history-error">could not read the log: {h.error}</div>}
      {h.runs.length === 0 ? <div className="muted">No run logged yet.</div> : (
        <div className="history-body">
          <div className="history-runs">
            <LineageGraph runs={h.runs} lineage={lineage} />
            <ol className="history-list">
              {h.runs.map((run) => (
                <RunRow key={run.runId} run={run} truth={truth} picked={run.runId === pickedId} inLineage={lineage.has(run.runId)}
                  onPick={() => session.runHistory.pick(run.runId)} />
              ))}
            </ol>
          </div>
          <PickedRun session={session} picked={h.picked} runs={h.runs} truth={truth} running={running} />
        </div>
      )}
    </section>
  );
}

// Nodes in lanes, one row per run in log order; an edge from each run to the
// run it started from. The picked run's lineage is drawn in bold.
function LineageGraph({ runs, lineage }) {
  const lanes = Math.max(1, ...runs.map((r) => r.lane + 1));
  const row = new Map(runs.map((r, i) => [r.runId, { x: 12 + r.lane * LANE, y: ROW / 2 + i * ROW }]));
  return (
    <svg className="lineage" data-testid="history-graph" width={12 + lanes * LANE} height={runs.length * ROW} aria-label="run lineage">
      {runs.filter((r) => r.parentRunId !== null && row.has(r.parentRunId)).map((r) => {
        const from = row.get(r.parentRunId);
        const to = row.get(r.runId);
        const d = from.x === to.x ? `M ${from.x} ${from.y} V ${to.y}` : `M ${from.x} ${from.y} C ${from.x} ${to.y}, ${from.x} ${to.y}, ${to.x} ${to.y}`;
        const on = lineage.has(r.runId) && lineage.has(r.parentRunId);
        return <path key={r.runId} d={d} className={`edge${on ? ' on' : ''}${r.branched ? ' branched' : ''}`} data-edge={`${r.parentRunId}->${r.runId}`} data-on={String(on)} />;
      })}
      {runs.map((r) => {
        const { x, y } = row.get(r.runId);
        return <circle key={r.runId} cx={x} cy={y} r={lineage.has(r.runId) ? 6 : 5} className={`node ${r.status}${lineage.has(r.runId) ? ' on' : ''}`} data-node={r.runId} />;
      })}
    </svg>
  );
}

function firstWords(run, max = 70) {
  const messages = run.input && Array.isArray(run.input.messages) ? run.input.messages : [];
  const last = [...messages].reverse().find((m) => m && m.role === 'user' && typeof m.content === 'string');
  if (!last) return '';
  return last.content.length > max ? `${last.content.slice(0, max - 3)}...` : last.content;
}

function RunRow({ run, truth, picked, inLineage, onPick }) {
  const live = truth && truth.runId === run.runId && !truth.finished;
  const how = run.parentRunId === null ? 'first run' : run.branched ? `branch of ${run.parentRunId}` : `after ${run.parentRunId}`;
  const status = live ? 'running' : run.status === 'finished' && run.outcome && run.outcome.type === 'interrupt' ? 'finished, interrupt' : run.status;
  const seqs = run.firstSeq === null ? 'no seq' : `seq ${run.firstSeq}-${run.lastSeq}`;
  return (
    <li className={`history-run${picked ? ' picked' : ''}${inLineage ? ' on' : ''}`} style={{ height: ROW }}>
      <button type="button" data-testid="history-run" data-run-id={run.runId} data-parent={run.parentRunId ?? ''} data-branched={String(run.branched)}
        data-lane={run.lane} data-status={run.status} data-picked={String(picked)} onClick={onPick} title={`${run.runId}: ${firstWords(run, Infinity)}`}>
        <b>{run.runId}</b> <span className="muted small">{how} · {status} · {seqs} · epoch {String(run.epoch ?? '-').slice(0, 6)}</span>
        <span className="small history-msg"> {firstWords(run)}</span>
      </button>
    </li>
  );
}

// What the top-level fields of the picked state and the agent's state now differ in.
function differsFrom(state, truthState) {
  if (!truthState) return [];
  const keys = new Set([...Object.keys(state), ...Object.keys(truthState)]);
  return [...keys].filter((k) => JSON.stringify(state[k]) !== JSON.stringify(truthState[k]));
}

function branchBlock(session, run, running, seq) {
  if (!run || run.status === 'running') return 'the run is still going';
  if (seq !== null) return 'a branch starts from the end of a run: slide back to its end';
  if (running) return 'wait for the current run to finish';
  if (session.sync.pendingEdits().length) return 'send your pending edit first: edits travel with follow-up runs, not branches';
  return null;
}

function PickedRun({ session, picked, runs, truth, running }) {
  if (!picked) return <div className="history-picked muted" data-testid="history-view" data-run-id="">Pick a run to see the state it ended with.</div>;
  const run = runs.find((r) => r.runId === picked.runId);
  const current = truth && picked.digest === truth.digest;
  const blocked = branchBlock(session, run, running, picked.seq);
  const changed = picked.state ? differsFrom(picked.state, session.sync.confirmedState) : [];
  const p = picked.state && picked.state.proposal;
  return (
    <div className="history-picked" data-testid="history-view" data-run-id={picked.runId} data-seq={picked.seq ?? 'end'} data-digest={picked.digest ?? ''}
      data-limit={picked.state && picked.state.budget ? picked.state.budget.limit : ''}>
      <div className="history-picked-head">
        <b>{picked.seq === null ? `State at the end of ${picked.runId}${run && run.status === 'running' ? ' (so far)' : ''}` : `State of ${picked.runId} at seq ${picked.seq}`}</b>
        <span className="muted small"> replayed from the log ({picked.replayed} events of its lineage) · digest <code>{short(picked.digest)}</code></span>
      </div>
      {run && run.firstSeq !== null && run.lastSeq > run.firstSeq && (
        <label className="small history-seq">
          seq <input type="range" data-testid="history-seq" min={run.firstSeq} max={run.lastSeq} value={picked.seq ?? run.lastSeq}
            onChange={(e) => session.runHistory.pick(picked.runId, Number(e.target.value))} />
          <span className="muted">{picked.seq ?? run.lastSeq} of {run.firstSeq}-{run.lastSeq}: slide to go back inside the run</span>
        </label>
      )}
      {picked.error ? <div className="warn small" data-testid="history-view-error">{picked.error}</div> : (
        <>
          <div className="small" data-testid="history-compare">
            {current ? 'This is the state the agent holds now.' : changed.length ? `Differs from the state the panes show now in: ${changed.join(', ')}.` : 'The same as the state the panes show now.'}
          </div>
          {p && <div className="small">Proposal: {money(p.amount, p.currency)} to <b>{p.recipient}</b></div>}
          <StateView state={picked.state} />
        </>
      )}
      <div className="approve-row">
        <button data-testid="history-branch" disabled={Boolean(blocked) || Boolean(picked.error)} onClick={() => session.branchFrom(picked.runId)}>
          Branch from here
        </button>
        <span className="muted small">{blocked ?? `a new run starts from this state (parentRunId ${picked.runId}), in a new epoch`}</span>
      </div>
    </div>
  );
}
