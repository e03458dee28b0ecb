// One connection to the agent, driven by the package's connectStateSync (the
// client half of the resync conversation: reconnect with lastSeq/epoch, with
// backoff, until the run has finished and the state is verified).
//
// The demo gives it a fetch that tees the response: every chunk goes to the
// reference handler and to the wire meter, then on to agui-state-sync. So both
// panes read exactly the same bytes. The tee also drops a connection that has
// gone silent (no byte, not even a heartbeat, for STALL_MS).
import { connectStateSync } from './pkg.js';

const STALL_MS = 3500; // heartbeats come every second
const ATTACH = 'X-AGUI-Attach'; // docs/wire.md section 8

const newRunId = () => `run-${Math.random().toString(36).slice(2, 8)}`;
const FIRST_MESSAGE = { id: 'user-1', role: 'user', content: 'Plan our team offsite in Lisbon and prepare the venue deposit.' };

// `saved`: the run this tab was in before a reload ({ runId, parentRunId,
// messages, sendEdits }, from session.js), so the reloaded page rejoins it rather than
// starting another; `onSave` hears every change of it.
// `attach`: the page opened a thread that exists (a reload, a second page):
// its first stream attaches to the thread's run (a GET with X-AGUI-Attach and
// the catch-up headers, no body: docs/wire.md section 8) and gets the run so
// far, its answer being streamed from the first word, then live.
// `onConnection(kind)` hears each response's X-AGUI-Attach ('run', 'idle' or null).
export function createLink({ threadId, sync, reference, meter, onLog, onOutcomes, onFinished, onBusy, saved = null, onSave, attach = false, onConnection }) {
  let loop = null;
  let stopped = false;
  let connections = 0;
  let finishedRun = null;
  let runId = saved?.runId ?? newRunId();
  const messages = saved?.messages ?? [FIRST_MESSAGE];
  // The first run carries no edits: pending edits travel with the app's next
  // RunAgentInput (a new run), not with a reconnect inside the current one.
  let sendEdits = saved?.sendEdits ?? false;
  // A branch names the run it starts from (AG-UI's parentRunId); null for the
  // first run and for follow-ups, which continue the run before them.
  let parentRunId = saved?.parentRunId ?? null;
  let attaching = attach;
  let attachedTo = null; // the last response's X-AGUI-Attach
  const save = () => onSave && onSave({ runId, parentRunId, messages, sendEdits });
  const log = (kind, text) => onLog && onLog({ kind, text });

  const withAttach = (headers) => {
    const out = new Headers(headers);
    out.set(ATTACH, threadId);
    return out;
  };

  async function teeFetch(url, init) {
    connections++;
    // A request without a body is an attach (the loop's body() said so).
    const res = await fetch(url, init.body === undefined ? { ...init, headers: withAttach(init.headers) } : init);
    reference.newConnection();
    meter.newConnection();
    attachedTo = res.headers.get(ATTACH);
    onConnection && onConnection(attachedTo);
    if (!res.ok || !res.body) return res;
    const reader = res.body.getReader();
    let lastBytes = Date.now();
    let watchdog = null;
    const stop = () => { clearInterval(watchdog); watchdog = null; };
    const body = new ReadableStream({
      start(controller) {
        watchdog = setInterval(() => {
          if (Date.now() - lastBytes <= STALL_MS) return;
          stop();
          log('drop', 'no bytes for 3.5 s: dropping the connection');
          try { controller.error(new Error('stalled')); } catch { /* already closed */ }
          reader.cancel().catch(() => {});
        }, 500);
      },
      async pull(controller) {
        try {
          const { value, done } = await reader.read();
          if (done) { stop(); controller.close(); return; }
          lastBytes = Date.now();
          reference.feed(value);
          meter.feed(value);
          controller.enqueue(value); // -> sync.feed(value) inside connectStateSync
        } catch (err) {
          stop();
          try { controller.error(err); } catch { /* already errored */ }
        }
      },
      cancel(reason) { stop(); return reader.cancel(reason); },
    });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  }

  // A normal AG-UI RunAgentInput; connectStateSync adds forwardedProps.stateSync
  // and the X-AGUI-State-* / Last-Event-ID headers.
  // Read at every attempt: a reconnect re-sends the edits still pending
  // (the agent applies an editId once), and drops those acknowledged meanwhile.
  function runInput() {
    return {
      threadId,
      runId,
      ...(parentRunId ? { parentRunId } : {}),
      state: {},
      messages,
      tools: [],
      context: [],
      ...(sendEdits ? sync.runInput() : {}),
    };
  }

  // The run an attach joined is this tab's run from now on: a reconnect or a refresh rejoins it.
  function joined(event) {
    attaching = false;
    if (event.runId === runId) return;
    runId = event.runId;
    parentRunId = event.parentRunId ?? null;
    sendEdits = false;
    save();
  }

  function start() {
    if (stopped || loop) return;
    save();
    loop = connectStateSync(sync, {
      url: '/agent',
      fetch: teeFetch,
      // Until an attach has joined the thread's run: no body (a GET attach);
      // then the page is on that run, and a reconnect rejoins it by its runId,
      // as a cut client resumes the stream it attached to.
      body: () => (attaching ? undefined : runInput()),
      backoff: { initialMs: 300, maxMs: 3000, jitter: 0.3 },
      onOutcome: (o) => {
        if (attaching && attachedTo === 'run' && o.kind === 'event' && o.event?.type === 'RUN_STARTED') joined(o.event);
        onOutcomes && onOutcomes([o]);
      },
      onStatus: (s) => {
        if (s.state === 'connecting' && s.attempt > 1) {
          const rr = sync.resyncRequest();
          log('reconnect', `reconnect #${s.attempt - 1} with lastSeq ${sync.lastSeq ?? 'none'}${rr ? ` (${rr.reason})` : ''}`);
        } else if (s.state === 'waiting' && s.error) {
          log('drop', `connection lost (${s.error.message || s.error})`);
        }
      },
    });
    const current = loop;
    onBusy && onBusy(true);
    current.done
      .then(() => {
        if (loop !== current) return;
        loop = null;
        onBusy && onBusy(false);
        if (!stopped && sync.status === 'synced') {
          const again = finishedRun === runId; // refresh() of a run that had finished
          finishedRun = runId;
          log('done', again ? `re-checked with the agent: in sync at seq ${sync.lastSeq}` : `run finished, in sync at seq ${sync.lastSeq}`);
          onFinished && onFinished();
        }
      })
      .catch((err) => {
        if (loop === current) { loop = null; onBusy && onBusy(false); }
        log('error', `stream loop stopped: ${err.message}`);
      });
  }

  function nextRun(text, options) {
    if (stopped || loop) return false;
    attaching = false; // a page that attached to an idle thread: this run is its own
    runId = newRunId();
    parentRunId = options.parentRunId;
    messages.push({ id: `user-${messages.length + 1}`, role: 'user', content: text });
    sendEdits = options.sendEdits;
    save();
    start();
    return true;
  }

  return {
    start,
    stop() { stopped = true; if (loop) loop.close(); loop = null; },
    // One more connection after the run (a catch-up, usually empty, and a
    // heartbeat): what a guard that went stale needs to see. A page whose
    // attach found no run going attaches again (its runId names no run).
    refresh() { start(); },
    // The app's next run on the thread (a user message), carrying the pending
    // edits in forwardedProps.stateSync.edits. False while a run is streaming.
    continueRun(text) {
      return nextRun(text, { sendEdits: true, parentRunId: null });
    },
    // A run that starts from where an earlier run ended (time travel). It
    // carries no edits: they were made on this branch's state, not that one.
    branchRun(fromRunId, text) {
      return nextRun(text, { sendEdits: false, parentRunId: fromRunId });
    },
    get connections() { return connections; },
    get busy() { return loop !== null; },
  };
}
