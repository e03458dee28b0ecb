// The checkout card: an AG-UI 1.0 activity (generative UI) the agent fills in
// with ACTIVITY_SNAPSHOT / ACTIVITY_DELTA. Both panes render the same card
// from their own copy of the activity: the left from what @ag-ui/client's
// rules kept, the right from agui-state-sync's verified mirror (sync.activities),
// with its status and seq. data-content carries the content the card shows, for
// the e2e test to compare with the agent's.
import { money } from './StateView.jsx';

function statusLine(activity) {
  if (!activity.status) return null; // the reference handler knows of no status
  const at = activity.lastSeq != null ? ` @ seq ${activity.lastSeq}` : '';
  const why = activity.resync ? ` (${activity.resync.reason})` : '';
  return <span className={`badge status-${activity.status}`} data-testid={`${activity.pane}-checkout-status`} data-status={activity.status}>{activity.status}{at}{why}</span>;
}

// Approve the form as this pane shows it; the agent's verdict below.
function ApproveRow({ pane, approval }) {
  const { canApprove, blockReason, onApprove, verdict } = approval;
  return (
    <div className="approve-row">
      <button data-testid={`${pane}-checkout-approve`} disabled={!canApprove} onClick={onApprove}>Approve checkout</button>
      {!canApprove && <span className="muted small">blocked: {blockReason}</span>}
      {verdict && (verdict.clientRefused
        ? <span className="verdict refused" data-testid={`${pane}-checkout-verdict`} data-verdict="refused">Not sent: {verdict.clientRefused}</span>
        : <span className={`verdict ${verdict.matched ? 'ok' : 'bad'}`} data-testid={`${pane}-checkout-verdict`} data-verdict={verdict.matched ? 'matched' : 'rejected'}>
          {verdict.matched ? 'The agent verified it: this is its form.' : 'The agent REJECTED it: its form is not the one you approved.'}
        </span>)}
    </div>
  );
}

export function ActivityCard({ pane, activity, approval }) {
  if (!activity) {
    return <div className="activity muted small" data-testid={`${pane}-checkout`} data-present="false">No checkout form yet.</div>;
  }
  const c = activity.content || {};
  const lines = Array.isArray(c.lines) ? c.lines : [];
  return (
    <div className="activity" data-testid={`${pane}-checkout`} data-present="true" data-content={JSON.stringify(c)} data-seq={activity.lastSeq ?? ''}>
      <div className="activity-head">
        <span>Activity: {activity.activityType} form <span className="muted">(rev {c.revision ?? '?'})</span></span>
        {statusLine({ ...activity, pane })}
      </div>
      <dl className="checkout">
        <dt>Payee</dt><dd>{c.payee ?? <span className="muted">...</span>}</dd>
        <dt>Amount</dt><dd>{c.amount != null ? money(c.amount, c.currency) : <span className="muted">...</span>}</dd>
        <dt>Lines</dt><dd>{lines.length ? lines.map((l, i) => <div key={i}>{l.item}: {money(l.amount, '')}</div>) : <span className="muted">none yet</span>}</dd>
        <dt>Reference</dt><dd>{c.reference ?? <span className="muted">...</span>}</dd>
        <dt>Status</dt><dd data-testid={`${pane}-checkout-form-status`}>{c.status}</dd>
      </dl>
      <ApproveRow pane={pane} approval={approval} />
    </div>
  );
}
