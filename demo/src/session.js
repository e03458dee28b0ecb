// One demo session: a thread on the server, one teed connection, the two
// handlers, the wire meter, and the agent's truth polled for the indicators.
// React components only subscribe to this object.
import { EDIT_POLICY, LIMIT_PATH } from './edit-policy.js';
import { trackCheckout } from './checkout.js';
import { trackReferenceEdits, trackSyncEdits } from './edits.js';
import { createRunHistory } from './history.js';
import { createLink } from './link.js';
import { createStateSync, indexedDbStorage, stateDigest } from './pkg.js';
import { createReferenceHandler } from './reference.js';
import { store } from './store.js';
import { createWireMeter } from './wire.js';

const TRUTH_POLL_MS = 400;
const LAG_GRACE_MS = 2500; // the reference "lags" if it matches an agent state this recent

export function judge(digest, seq, truth) {
  if (!truth || !digest) return { state: 'unknown' };
  if (digest === truth.digest) return { state: 'match', seq: truth.seq };
  if (seq != null) {
    const at = truth.recent.find((r) => r.seq === seq);
    if (at && at.digest === digest) return { state: 'behind', seq };
    return { state: 'drift' };
  }
  const recent = [...truth.recent].reverse().find((r) => r.digest === digest);
  if (recent && truth.now - recent.t < LAG_GRACE_MS && !truth.finished) return { state: 'behind', seq: recent.seq };
  return { state: 'drift' };
}

// The thread this tab follows is in the URL (#thread=<id>), so a reload
// rejoins it, and its checkpoint; a page without one, or Restart, starts a new thread.
function threadFromUrl() {
  const m = /^#thread=([\w-]+)$/.exec(location.hash);
  return m ? m[1] : null;
}

// The run this tab is in (runId, messages, whether edits travel), kept per tab
// across reloads (sessionStorage), so the reloaded page rejoins the same run.
function savedRun(key) {
  try {
    return JSON.parse(sessionStorage.getItem(key) ?? 'null');
  } catch {
    return null;
  }
}

// What the sync pane's log says about the checkpoint at load.
function describeRestore(sync) {
  const info = sync.persistence;
  if (info.restore === 'restored') {
    const n = sync.pendingEdits().length;
    return `page reloaded: restored from its checkpoint at seq ${sync.lastSeq} with ${n} pending edit${n === 1 ? '' : 's'}; resyncing until the server's catch-up`;
  }
  if (info.restore === 'discarded') return `checkpoint discarded (${info.error.code}): ${info.error.message}`;
  if (info.inactiveReason === 'locked') return 'another tab holds this thread\'s checkpoint: this tab runs without one';
  if (info.inactiveReason === 'unsupported') return 'no IndexedDB or crypto.subtle here: running without checkpoints';
  return null;
}

export async function createSession({ syncOptions = {} } = {}) {
  const opened = threadFromUrl(); // a thread that exists: this page attaches to it (a reload, a second page)
  const threadId = opened ?? `thread-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  history.replaceState(null, '', `#thread=${threadId}`);
  const checkpointKey = `agui-demo:${threadId}`;
  const runKey = `agui-demo-run:${threadId}`;
  const t0 = performance.now();
  const now = () => Math.round(performance.now() - t0);

  // A small reorder window and gap budget: a lost event is given up on after
  // a few later ones, so the catch-up is a short replay, not a snapshot.
  // staleCheckMs: re-evaluate the guard every second, so Approve also locks
  // when the stream goes quiet for longer than staleAfterMs (15 s).
  // EDIT_POLICY: the same ownership and conflict rule as the server's applyEdits.
  // persist: a checkpoint per thread in IndexedDB (the default storage), so a
  // reload comes back with the state and the pending edit, and catches up by replay.
  // activities: the agent's checkout card (AG-UI activities), sequenced like the state.
  const sync = await createStateSync({
    reorderWindow: 16, maxGapEvents: 4, staleCheckMs: 1000, ...EDIT_POLICY, persist: { key: checkpointKey }, activities: true, ...syncOptions,
  });
  const reference = createReferenceHandler({ now });
  const refEdits = trackReferenceEdits(reference, LIMIT_PATH, now);
  const syncEdits = trackSyncEdits(sync, LIMIT_PATH, now);
  syncEdits.restore(sync.pendingEdits()); // a reloaded page's pending edit is marked again
  const persistence = store(sync.persistence);
  const running = store(false); // a run is streaming (a follow-up run waits for it)
  const transcript = store({ messages: [], interrupt: null });
  const syncLog = store([]);
  const linkLog = store([]);
  const truth = store(null);
  const judgement = store({ reference: { state: 'unknown' }, sync: { state: 'unknown' } });
  const samples = store([]);
  const events = store([]); // chart markers: {t, kind}
  const approvals = store({ reference: null, sync: null });
  const guardTimeline = [];
  const finished = store(false);
  const guard = store({ ok: false, reason: 'loading' });
  const runHistory = createRunHistory({ threadId });

  // The right pane's Approve follows the package's guard for /proposal. Every
  // change of (status, approvable) is recorded so the e2e test can check that
  // Approve was never enabled while the state was unverified or resyncing.
  function recordGuard() {
    const g = guard.get();
    const entry = { t: now(), status: sync.status, enabled: Boolean(g && g.ok), reason: g && !g.ok ? g.reason : null, lastSeq: sync.lastSeq };
    const last = guardTimeline[guardTimeline.length - 1];
    if (!last || last.status !== entry.status || last.enabled !== entry.enabled || last.reason !== entry.reason) guardTimeline.push(entry);
  }
  const unwatch = sync.guard.watch('/proposal', ({ value, approvable, reason, token }) => {
    guard.set({ ok: approvable, reason, token, value });
    recordGuard();
  });
  // A feed tells subscribers first and re-evaluates the guard's watchers right
  // after, in the same task: record once both are in, as the page paints them.
  const unsubscribe = sync.subscribe(() => queueMicrotask(recordGuard));

  const pushLog = (s, entry) => s.set((l) => [...l.slice(-299), { t: now(), ...entry }]);
  const mark = (kind) => events.set((l) => [...l, { t: now(), kind }]);

  // Every connection to a run carries the run's messages so far from their
  // first word (docs/wire.md section 8, attach), so a TEXT_MESSAGE_START
  // begins a message's text again: a reconnect shows each message once, whole.
  const meter = createWireMeter({
    onEvent(ev) {
      if (ev.type === 'TEXT_MESSAGE_START') {
        transcript.set((tr) => {
          if (!tr.messages.some((m) => m.id === ev.messageId)) return { ...tr, messages: [...tr.messages, { id: ev.messageId, text: '' }] };
          return { ...tr, messages: tr.messages.map((m) => (m.id === ev.messageId ? { ...m, text: '' } : m)) };
        });
      } else if (ev.type === 'TEXT_MESSAGE_CONTENT') {
        transcript.set((tr) => {
          const has = tr.messages.some((m) => m.id === ev.messageId);
          const messages = has ? tr.messages.map((m) => (m.id === ev.messageId ? { ...m, text: m.text + ev.delta } : m)) : [...tr.messages, { id: ev.messageId, text: ev.delta }];
          return { ...tr, messages };
        });
      } else if (ev.type === 'RUN_FINISHED' && ev.outcome && ev.outcome.type === 'interrupt') {
        transcript.set((tr) => ({ ...tr, interrupt: ev.outcome.interrupts[0] }));
      }
    },
    onCatchUp(kind, count, since) {
      if (kind === 'replay') { pushLog(syncLog, { kind: 'replay', text: `server replayed ${count} missed deltas after seq ${since}` }); mark('replay'); }
      else if (kind === 'snapshot') { pushLog(syncLog, { kind: 'snapshot', text: `server sent a catch-up snapshot (client was at seq ${since})` }); mark('snapshot'); }
    },
  });

  // An activity's outcome (it names a messageId): its own line in the log.
  function onActivityOutcome(o) {
    const what = `activity ${o.messageId}`;
    if (o.kind === 'resync') {
      pushLog(syncLog, { kind: 'resync', text: `${what} resync: ${o.reason}${o.detail ? ` (${o.detail})` : ''}, lastSeq ${o.lastSeq ?? 'none'}` });
      mark('resync');
    } else if (o.kind === 'ignored' && o.reason === 'reordered') {
      pushLog(syncLog, { kind: 'held', text: `${what} seq ${o.seq} arrived early: held until the gap fills` });
    } else if (o.kind === 'ignored' && o.reason === 'duplicate') {
      pushLog(syncLog, { kind: 'ignored', text: `${what} duplicate seq ${o.seq} ignored` });
    } else if (o.kind === 'applied' && o.type === 'ACTIVITY_SNAPSHOT') {
      pushLog(syncLog, { kind: 'snapshot', text: `${what} snapshot applied at seq ${o.seq ?? 'none'}` });
    } else if (o.kind === 'error') {
      pushLog(syncLog, { kind: 'error', text: `${what} ${o.code}: ${o.message}` });
    }
  }

  function onOutcomes(outcomes) {
    for (const o of outcomes) {
      if (o.messageId !== undefined) { onActivityOutcome(o); continue; }
      syncEdits.onOutcome(o);
      if (o.kind === 'conflict') {
        pushLog(syncLog, { kind: 'conflict', text: `conflict on ${o.path} (edit ${o.editId}): yours ${JSON.stringify(o.mine)}, agent's ${JSON.stringify(o.theirs)} -> ${o.resolution}` });
      } else if (o.kind === 'edit-acked') {
        pushLog(syncLog, { kind: 'acked', text: `edit ${o.editId} acknowledged by the agent at seq ${o.seq}` });
      } else if (o.kind === 'edit-rejected') {
        pushLog(syncLog, { kind: 'rejected', text: `edit ${o.editId} rejected by the agent: ${o.reason}` });
      } else if (o.kind === 'resync') {
        pushLog(syncLog, { kind: 'resync', text: `resync: ${o.reason}${o.detail ? ` (${o.detail})` : ''}, lastSeq ${o.lastSeq ?? 'none'}` });
        mark('resync');
      } else if (o.kind === 'ignored' && o.reason === 'duplicate') {
        pushLog(syncLog, { kind: 'ignored', text: `duplicate seq ${o.seq} ignored` });
      } else if (o.kind === 'ignored' && o.reason === 'reordered') {
        pushLog(syncLog, { kind: 'held', text: `seq ${o.seq} arrived early: held until the gap fills` });
      } else if (o.kind === 'applied' && o.type === 'STATE_SNAPSHOT') {
        pushLog(syncLog, { kind: 'snapshot', text: `snapshot applied at seq ${o.seq ?? 'none'}` });
      } else if (o.kind === 'error') {
        pushLog(syncLog, { kind: 'error', text: `${o.code}: ${o.message}` });
      }
    }
  }

  const restoreNote = describeRestore(sync);
  if (restoreNote) pushLog(syncLog, { kind: 'restore', text: restoreNote });
  onOutcomes(sync.persistence.outcomes); // the restore's: the 'restored' resync, and any edit it could not keep

  const link = createLink({
    threadId,
    sync,
    reference,
    meter,
    saved: savedRun(runKey),
    onSave: (run) => { try { sessionStorage.setItem(runKey, JSON.stringify(run)); } catch { /* storage full or off */ } },
    onLog: (e) => { pushLog(linkLog, e); if (e.kind !== 'resync') pushLog(syncLog, e); if (e.kind === 'drop') mark('drop'); },
    onOutcomes,
    onFinished: () => finished.set(true),
    onBusy: (busy) => running.set(busy),
    attach: opened !== null,
    onConnection: (kind) => {
      if (kind) pushLog(syncLog, { kind: 'attach', text: kind === 'run' ? 'attached to the thread\'s running run: its messages so far, then live' : 'attached: no run going, caught up' });
    },
  });

  // The user's next message starts a new run that carries the pending edits.
  function continueRun() {
    const text = 'I changed the budget limit; please take my edits into account.';
    if (!link.continueRun(text)) return false;
    finished.set(false);
    transcript.set((tr) => ({ ...tr, interrupt: null, messages: [...tr.messages, { id: `user-${now()}`, role: 'user', text }] }));
    return true;
  }

  // Time travel: a new run that starts from where `runId` ended (its
  // parentRunId); the agent reads that state from the thread's log.
  function branchFrom(runId) {
    const text = `Go back to the end of run ${runId} and try another way from there.`;
    if (!link.branchRun(runId, text)) return false;
    finished.set(false);
    transcript.set((tr) => ({ ...tr, interrupt: null, messages: [...tr.messages, { id: `user-${now()}`, role: 'user', text }] }));
    return true;
  }

  // The agent's truth, and how each pane compares with it.
  let refDigestCache = { version: -1, digest: null };
  let syncDigestCache = { state: undefined, digest: null };
  const refDigest = () => {
    if (refDigestCache.version !== reference.version) refDigestCache = { version: reference.version, digest: stateDigest(reference.state) };
    return refDigestCache.digest;
  };
  // The agent's state is compared with the confirmed layer: a pending edit is
  // the user's, shown on top, and not yet the agent's (its own badge says so).
  const syncDigest = () => {
    const s = sync.confirmedState;
    if (syncDigestCache.state !== s) syncDigestCache = { state: s, digest: stateDigest(s) };
    return syncDigestCache.digest;
  };

  let polling = null;
  let finishedAt = null;
  let stopped = false;
  async function poll() {
    if (stopped) return;
    // The server creates the thread on the first POST /agent: ask once bytes came.
    if (meter.snapshot().total === 0) { polling = setTimeout(poll, 100); return; }
    try {
      const res = await fetch(`/truth?threadId=${encodeURIComponent(threadId)}`, { cache: 'no-store' });
      if (res.ok) {
        const tr = await res.json();
        truth.set(tr);
        runHistory.sync(tr.logLength);
        persistence.set(sync.persistence);
        // Nothing to compare until a pane has received its first state.
        const j = {
          reference: reference.version > 0 ? judge(refDigest(), null, tr) : { state: 'unknown' },
          sync: sync.lastSeq != null || sync.status !== 'unverified' ? judge(syncDigest(), sync.lastSeq, tr) : { state: 'unknown' },
        };
        judgement.set(j);
        const m = sync.metrics();
        const taxRate = typeof m.taxRate === 'number' ? m.taxRate : (m.deltasApplied ? m.resyncs / m.deltasApplied : 0);
        if (finishedAt === null && finished.get() && tr.finished) finishedAt = now();
        if (finishedAt === null || now() - finishedAt < 2000) samples.set((s) => [...s, { t: now(), bytes: meter.snapshot(), taxRate, resyncs: m.resyncs, deltas: m.deltasApplied, ref: j.reference.state, sync: j.sync.state, status: sync.status }].slice(-600));
      }
    } catch { /* the server may be restarting */ }
    polling = setTimeout(poll, TRUTH_POLL_MS);
  }

  async function approve(pane, approval) {
    const res = await fetch('/approve', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ threadId, pane, approval }) });
    const verdict = await res.json();
    approvals.set((a) => ({ ...a, [pane]: { ...verdict, approval } }));
    return verdict;
  }

  const checkout = trackCheckout({ sync, reference, approve, onRefused: (pane, reason) => approvals.set((a) => ({ ...a, [pane]: { clientRefused: reason } })) });

  let forgotten = false;
  return {
    threadId, sync, reference, meter, link,
    transcript, syncLog, linkLog, truth, judgement, samples, events, approvals, finished, guard, guardTimeline,
    refEdits, syncEdits, running, continueRun, persistence, runHistory, branchFrom,
    now, stateDigest, approve, checkout,
    start() { link.start(); poll(); },
    // Restart: the next session starts a new thread; this one's checkpoint and run go at dispose().
    forget() {
      forgotten = true;
      history.replaceState(null, '', location.pathname + location.search);
    },
    dispose() {
      stopped = true; clearTimeout(polling); link.stop(); refEdits.dispose();
      if (typeof unwatch === 'function') unwatch();
      checkout.dispose();
      if (typeof unsubscribe === 'function') unsubscribe();
      sync.dispose();
      if (forgotten) {
        sessionStorage.removeItem(runKey);
        // After the write in flight, so that it cannot bring the checkpoint back.
        sync.flush().then(() => indexedDbStorage().delete(checkpointKey)).catch(() => {});
      }
    },
  };
}
