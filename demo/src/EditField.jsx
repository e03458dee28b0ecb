// The budget-limit field of each pane (issue 14): the user edits it while the
// scripted agent also writes it midway. Left: @ag-ui/client's setState, the
// edit vanishes. Right: agui-state-sync's edit, pending, conflict, acknowledged.
import { useState, useSyncExternalStore } from 'react';

const useStore = (s) => useSyncExternalStore(s.subscribe, s.get, s.get);
const eur = (n) => (typeof n === 'number' ? `${n.toLocaleString('en-US')} EUR` : '?');

function LimitInput({ pane, current, onSave, disabled }) {
  const [draft, setDraft] = useState('');
  const [error, setError] = useState(null);
  const save = (e) => {
    e.preventDefault();
    const value = Number(draft);
    if (draft.trim() === '' || !Number.isFinite(value) || value < 0) { setError('a number, please'); return; }
    const r = onSave(value);
    setError(r.ok ? null : r.reason);
    if (r.ok) setDraft('');
  };
  return (
    <form className="edit-row" onSubmit={save}>
      <label>Budget limit <b data-testid={`${pane}-limit`}>{eur(current)}</b></label>
      <input data-testid={`${pane}-limit-input`} type="number" min="0" step="500" placeholder="new limit"
        value={draft} onChange={(e) => setDraft(e.target.value)} disabled={disabled} />
      <button data-testid={`${pane}-limit-save`} type="submit" disabled={disabled}>Save</button>
      {error && <span className="warn small" data-testid={`${pane}-edit-error`}>refused: {error}</span>}
    </form>
  );
}

export function ReferenceLimitEditor({ edits, state }) {
  const last = useStore(edits.last);
  const current = state.budget && state.budget.limit;
  return (
    <div className="edit-box ref">
      <LimitInput pane="ref" current={current} onSave={edits.edit} disabled={current === undefined} />
      {last && (
        <div className={`edit-note ${last.status}`} data-testid="ref-edit-status" data-status={last.status}>
          {last.status === 'shown'
            ? <>Showing your {eur(last.value)} (setState).</>
            : <>Your {eur(last.value)} is gone: the next state event replaced the state {last.lostAfterMs} ms later, and nothing said so.
              The field shows whatever the agent sent since.</>}
        </div>
      )}
    </div>
  );
}

const STATUS_TEXT = {
  pending: 'pending: not yet acknowledged by the agent; it goes with your next run',
  acked: 'acknowledged by the agent',
  rejected: 'rejected by the agent',
  overruled: "overruled: the agent's value won (agent-wins)",
};

export function SyncLimitEditor({ session, state }) {
  const last = useStore(session.syncEdits.last);
  const running = useStore(session.running);
  const current = state.budget && state.budget.limit;
  const pending = session.sync.pendingEdits().length;
  return (
    <div className="edit-box sync">
      <LimitInput pane="sync" current={current} onSave={session.syncEdits.edit} disabled={current === undefined} />
      {last && (
        <div className={`edit-note ${last.status}`} data-testid="sync-edit-status" data-status={last.status} data-seq={last.seq ?? ''}>
          Your {eur(last.value)}: <b>{STATUS_TEXT[last.status]}</b>
          {last.status === 'acked' && <> at seq {last.seq}</>}
          {last.status === 'rejected' && <> ({last.reason})</>}
        </div>
      )}
      {last && last.conflict && <ConflictBanner edit={last} />}
      <div className="edit-row">
        <button data-testid="sync-continue" disabled={running || pending === 0} onClick={() => session.continueRun()}>
          Send my edit to the agent (next run)
        </button>
        <span className="muted small">{running ? 'waits for the current run to finish' : `${pending} pending`}</span>
      </div>
    </div>
  );
}

function ConflictBanner({ edit }) {
  const c = edit.conflict;
  const outcome = edit.status === 'acked'
    ? `The agent accepted yours at seq ${edit.seq}`
    : c.resolution === 'user-wins' ? 'Yours is kept (user-wins) and goes to the agent with your next run' : "The agent's stands (agent-wins)";
  return (
    <div className="conflict" data-testid="sync-conflict" data-mine={JSON.stringify(c.mine)} data-theirs={JSON.stringify(c.theirs)}
      data-resolution={c.resolution}>
      <b>Conflict on {c.path}</b> at seq {c.seq}: the agent wrote <b data-testid="sync-conflict-theirs">{eur(c.theirs)}</b> while
      your <b data-testid="sync-conflict-mine">{eur(c.mine)}</b> was pending. {outcome}.
    </div>
  );
}
