import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from 'react';

import { ActivityCard } from './ActivityCard.jsx';
import { CHECKOUT } from './checkout-id.js';
import { WireChart } from './Chart.jsx';
import { ReferenceLimitEditor, SyncLimitEditor } from './EditField.jsx';
import { FaultPanel } from './FaultPanel.jsx';
import { RunHistory } from './RunHistory.jsx';
import { money, StateView } from './StateView.jsx';
import { useAgentState } from './pkg.js';
import { createSession } from './session.js';

const useStore = (s) => useSyncExternalStore(s.subscribe, s.get, s.get);
const short = (d) => (d ? d.replace('sha256:', '').slice(0, 10) : '...');

export function App() {
  const [session, setSession] = useState(null);
  const [error, setError] = useState(null);
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    let alive = true;
    let s = null;
    createSession()
      .then((created) => {
        s = created;
        if (!alive) { s.dispose(); return; }
        window.__demo = s;
        setSession(s);
        s.start();
      })
      .catch((err) => { console.error(err); setError(String(err && err.stack || err)); });
    return () => { alive = false; if (s) s.dispose(); setSession(null); };
  }, [generation]);

  return (
    <div className="app">
      <header className="top">
        <div>
          <h1>Same bytes, two handlers</h1>
          <p className="lede">
            One AG-UI stream from a scripted agent, through a faulty network, feeds both panes byte for byte.
            Left: the reference handler from the AG-UI docs (<code>applyPatch</code>, no sequencing).
            Right: <b>agui-state-sync</b>. Watch the payee change mid-run, then try to approve.
            Early in the run, type a budget limit in both panes: the agent lowers that limit midway.
          </p>
        </div>
        <button className="restart" data-testid="restart" onClick={() => { if (session) session.forget(); setGeneration((g) => g + 1); }}>Restart run</button>
      </header>
      <FaultPanel />
      {error && <pre className="error" data-testid="fatal">{error}</pre>}
      {session ? <Session key={session.threadId} session={session} /> : !error && <p className="loading">Loading the engine...</p>}
    </div>
  );
}

function Session({ session }) {
  const truth = useStore(session.truth);
  const finished = useStore(session.finished);
  return (
    <>
      <section className="agent-row">
        <Transcript session={session} />
        <AgentTruth truth={truth} finished={finished} threadId={session.threadId} />
      </section>
      <section className="panes">
        <ReferencePane session={session} />
        <SyncPane session={session} />
      </section>
      <RunHistory session={session} />
      <WireChart session={session} />
    </>
  );
}

function Transcript({ session }) {
  const { messages, interrupt } = useStore(session.transcript);
  return (
    <div className="transcript card" data-testid="transcript">
      <h3>Agent</h3>
      <div className="msg user">Plan our team offsite in Lisbon and prepare the venue deposit.</div>
      {messages.map((m) => <div key={m.id} className={`msg${m.role === 'user' ? ' user' : ''}`}>{m.text}</div>)}
      {interrupt && (
        <div className="interrupt" data-testid="interrupt">
          Run paused for <b>{interrupt.reason}</b>: {interrupt.message}
        </div>
      )}
    </div>
  );
}

function AgentTruth({ truth, finished, threadId }) {
  const p = truth && truth.proposal;
  return (
    <div className="truth card" data-testid="agent-truth" data-seq={truth ? truth.seq : ''} data-digest={truth ? truth.digest : ''}>
      <h3>What the agent holds <span className="muted">(server truth)</span></h3>
      <dl>
        <dt>seq</dt><dd>{truth ? truth.seq : '...'}</dd>
        <dt>digest</dt><dd><code>{short(truth && truth.digest)}</code></dd>
        <dt>proposal</dt><dd data-testid="agent-proposal">{p ? `${money(p.amount, p.currency)} to ${p.recipient}` : 'none yet'}</dd>
        <dt>run</dt><dd data-testid="run-status">{truth && truth.finished ? 'finished, waiting for approval' : 'running'}{finished ? ' (client caught up)' : ''}</dd>
        <dt>faults so far</dt><dd>{truth ? summarizeFaults(truth) : '...'}</dd>
      </dl>
      <div className="muted small">thread {threadId}</div>
    </div>
  );
}

function summarizeFaults(truth) {
  const c = { drop: 0, duplicate: 0, reorder: 0 };
  for (const f of truth.faults) c[f.fate] = (c[f.fate] || 0) + 1;
  return `${c.drop} dropped, ${c.duplicate} duplicated, ${c.reorder} reordered (last 60), ${truth.stats.cuts} cuts`;
}

function MatchBadge({ judgement, testid, silent }) {
  const label = {
    match: 'matches agent',
    behind: `behind, matches agent at seq ${judgement.seq}`,
    drift: silent ? 'DIFFERS from agent (and does not know it)' : 'differs from agent',
    unknown: 'checking...',
  }[judgement.state];
  return <span className={`badge match-${judgement.state}`} data-testid={testid} data-state={judgement.state}>{label}</span>;
}

function ProposalCard({ pane, proposal, canApprove, blockReason, onApprove, verdict, extra }) {
  return (
    <div className="proposal" data-testid={`${pane}-proposal`}>
      <div className="proposal-head">Payment proposal</div>
      {proposal ? (
        <>
          <div className="pay">Pay <b data-testid={`${pane}-amount`}>{money(proposal.amount, proposal.currency)}</b> to <b data-testid={`${pane}-recipient`}>{proposal.recipient}</b></div>
          <div className="memo">{proposal.content || <span className="muted">memo being drafted...</span>}</div>
        </>
      ) : <div className="muted">No proposal yet.</div>}
      <div className="approve-row">
        <button data-testid={`${pane}-approve`} disabled={!proposal || !canApprove} onClick={onApprove}>Approve</button>
        {!canApprove && proposal && <span className="muted small" data-testid={`${pane}-approve-blocked`}>blocked: {blockReason}</span>}
        {extra}
      </div>
      {verdict && <Verdict pane={pane} verdict={verdict} />}
    </div>
  );
}

function Verdict({ pane, verdict }) {
  if (verdict.clientRefused) {
    return <div className="verdict refused" data-testid={`${pane}-verdict`} data-verdict="refused">Not sent: {verdict.clientRefused}</div>;
  }
  const a = verdict.agentValue;
  return (
    <div className={`verdict ${verdict.matched ? 'ok' : 'bad'}`} data-testid={`${pane}-verdict`} data-verdict={verdict.matched ? 'matched' : 'rejected'}>
      {verdict.matched
        ? <>Agent verified the approval against its own state: <b>match</b>. Payment executed.</>
        : <>Agent REJECTED the approval: what you approved is not what it holds{a ? <> (it would pay {money(a.amount, a.currency)} to <b>{a.recipient}</b>)</> : null}. Nothing was paid.</>}
    </div>
  );
}

function LogList({ entries, testid, empty }) {
  return (
    <ol className="log" data-testid={testid} data-count={entries.length}>
      {entries.length === 0 && <li className="muted">{empty}</li>}
      {entries.slice(-40).reverse().map((e, i) => <li key={i} className={`log-${e.kind}`}><span className="t">{(e.t / 1000).toFixed(1)}s</span> {e.text}</li>)}
    </ol>
  );
}

function ReferencePane({ session }) {
  const { reference } = session;
  const state = useSyncExternalStore(reference.subscribe, () => reference.state);
  const log = useSyncExternalStore(reference.subscribeLog, () => reference.log.length);
  const judgement = useStore(session.judgement).reference;
  const approvals = useStore(session.approvals);
  const onApprove = useCallback(() => {
    const proposal = reference.state.proposal;
    // No guard: the client signs whatever it shows.
    session.approve('reference', { path: '/proposal', seq: null, digest: session.stateDigest(proposal) });
  }, [session, reference]);
  const entries = useMemo(() => reference.log.slice(), [log]); // eslint-disable-line react-hooks/exhaustive-deps
  const refActivities = useSyncExternalStore(reference.subscribe, () => reference.activities);
  return (
    <div className="pane ref" data-testid="ref-pane">
      <div className="pane-head">
        <h2>Reference handler <span className="muted">(AG-UI docs)</span></h2>
        <div className="badges">
          <span className="badge status-none" data-testid="ref-status">no status: always looks fine</span>
          <MatchBadge judgement={judgement} testid="ref-match" silent />
        </div>
      </div>
      <StateView state={state} />
      <ReferenceLimitEditor edits={session.refEdits} state={state} />
      <ProposalCard pane="ref" proposal={state.proposal} canApprove onApprove={onApprove} verdict={approvals.reference} />
      <ActivityCard pane="ref" activity={refActivities[CHECKOUT.messageId]}
        approval={{ canApprove: true, onApprove: () => session.checkout.approve('reference'), verdict: approvals['reference-checkout'] }} />
      <h4>Log, newest first <span className="muted">(console.warn of dropped patches; it never resyncs)</span></h4>
      <LogList entries={entries} testid="ref-log" empty="nothing: it cannot tell anything is wrong" />
    </div>
  );
}

// What the checkpoint (createStateSync's persist, IndexedDB) did for this page.
function CheckpointNote({ session }) {
  const info = useStore(session.persistence);
  let text;
  if (info.inactiveReason === 'locked') text = 'off in this tab: another tab holds this thread\'s checkpoint';
  else if (info.inactiveReason === 'unsupported') text = 'off: no IndexedDB or crypto.subtle here';
  else if (info.restore === 'restored') text = `restored from IndexedDB after a reload, then caught up by the server's replay; ${info.writes} written since`;
  else if (info.restore === 'discarded') text = `the stored one was discarded (${info.error.code}); ${info.writes} written since`;
  else text = `written to IndexedDB after every update (${info.writes} so far): reload the page to try it`;
  return (
    <div className="muted small" data-testid="sync-persist" data-restore={info.restore} data-active={String(info.active)} data-reason={info.inactiveReason ?? ''}>
      Checkpoint: {text}
    </div>
  );
}

function SyncPane({ session }) {
  const { sync } = session;
  const state = useAgentState(sync);
  const judgement = useStore(session.judgement).sync;
  const guard = useStore(session.guard);
  const approvals = useStore(session.approvals);
  const log = useStore(session.syncLog);
  const status = sync.status;
  const onApprove = useCallback(() => {
    const g = session.guard.get();
    if (!g || !g.ok) return;
    // Bind the approval to the run's open interrupt (RUN_FINISHED outcome), if any.
    const open = sync.guard.interrupts();
    const r = sync.guard.approve(g.token, open.length ? { interruptId: open[0].id } : undefined);
    if (!r.ok) { session.approvals.set((a) => ({ ...a, sync: { clientRefused: r.reason } })); return; }
    session.approve('sync', r.approval);
  }, [session, sync]);
  const subscribe = useCallback((onChange) => sync.subscribe(onChange), [sync]);
  const activities = useSyncExternalStore(subscribe, () => sync.activities);
  const checkoutGuard = useStore(session.checkout.guard);
  const m = sync.metrics();
  return (
    <div className="pane sync" data-testid="sync-pane">
      <div className="pane-head">
        <h2>agui-state-sync</h2>
        <div className="badges">
          <span className={`badge status-${status}`} data-testid="sync-status" data-status={status}>{status}{sync.lastSeq != null ? ` @ seq ${sync.lastSeq}` : ''}</span>
          <MatchBadge judgement={judgement} testid="sync-match" />
        </div>
      </div>
      <CheckpointNote session={session} />
      <StateView state={state || {}} />
      <SyncLimitEditor session={session} state={state || {}} />
      <ProposalCard pane="sync" proposal={state && state.proposal} canApprove={Boolean(guard && guard.ok)} blockReason={guard && guard.reason} onApprove={onApprove} verdict={approvals.sync}
        extra={guard && !guard.ok && guard.reason === 'stale'
          ? <button className="recheck" data-testid="sync-recheck" onClick={() => session.link.refresh()}>Re-check with the agent</button>
          : null} />
      <ActivityCard pane="sync" activity={activities[CHECKOUT.messageId]}
        approval={{ canApprove: checkoutGuard.ok, blockReason: checkoutGuard.reason, onApprove: () => session.checkout.approve('sync'), verdict: approvals['sync-checkout'] }} />
      <h4>Log, newest first <span className="muted">(resyncs, replays, held events; {m.resyncs} resyncs, {m.duplicates} duplicates ignored, {m.reordersHealed} reorders healed)</span></h4>
      <LogList entries={log} testid="sync-log" empty="no trouble yet" />
    </div>
  );
}
