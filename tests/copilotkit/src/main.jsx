// The page tests/copilotkit/copilotkit.e2e.mjs drives: a CopilotKit React app
// whose one self-managed agent is a StateSyncHttpAgent. It shows the agent's
// state through CopilotKit's useAgent(), the engine's status, and what the
// page saw of the run; "Run" starts the run through CopilotKit
// (copilotkit.runAgent). window.__e2e hands the same numbers to the test.
import { useEffect, useSyncExternalStore } from 'react';
import { createRoot } from 'react-dom/client';
import { CopilotKitProvider, useAgent, useCopilotKit } from '@copilotkit/react-core/v2';
import { StateSyncHttpAgent } from 'agui-state-sync/ag-ui';

const AGENT_ID = 'stateSync';

// What the page saw, kept outside React so the test can read it too.
const seen = {
  runStarted: 0, // RUN_STARTED events through @ag-ui/client's pipeline (what CopilotKit's subscribers see)
  runFinished: 0,
  runFailed: 0,
  copilotkitRuns: 0, // CopilotKit's own onAgentRunStarted
  connections: 0, // requests the agent made (one per connection)
  retries: 0, // reconnects after a broken connection
  reconnectedAt: [], // the counter the page showed at each reconnect
  link: 'idle', // the agent's connection: connecting, open, waiting, closed
  outcome: 'idle', // copilotkit.runAgent(): running, finished, failed
  error: null,
};
let version = 0;
const listeners = new Set();
function changed() {
  version++;
  for (const listener of listeners) listener();
}
function subscribeSeen(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const agent = new StateSyncHttpAgent({
  url: '/agent',
  threadId: 'copilotkit-e2e',
  stateSync: {
    backoff: { initialMs: 50, maxMs: 250 },
    onStatus: ({ state }) => {
      if (state === 'connecting') seen.connections++;
      if (state === 'waiting') {
        seen.retries++;
        seen.reconnectedAt.push(agent.state?.counter ?? null);
      }
      seen.link = state;
      changed();
    },
  },
});
agent.subscribe({
  onRunStartedEvent: () => {
    seen.runStarted++;
    changed();
  },
  onRunFinishedEvent: () => {
    seen.runFinished++;
    changed();
  },
  onRunFailed: ({ error }) => {
    seen.runFailed++;
    seen.error = String(error?.message ?? error);
    changed();
  },
});
const selfManagedAgents = { [AGENT_ID]: agent };
const subscribeStatus = (onChange) => agent.stateSync.subscribe(onChange);
const getStatus = () => agent.stateSync.status;
window.__e2e = { seen, agent, ready: false };

function Row({ label, id, children }) {
  return (
    <tr>
      <th style={{ textAlign: 'left', fontWeight: 600, padding: '2px 16px 2px 0' }}>{label}</th>
      <td data-testid={id}>{children}</td>
    </tr>
  );
}

function Panel() {
  const { agent: shown } = useAgent({ agentId: AGENT_ID }); // re-renders on state and run status
  const { copilotkit } = useCopilotKit();
  useSyncExternalStore(subscribeSeen, () => version);
  const sync = agent.stateSync;
  const status = useSyncExternalStore(subscribeStatus, getStatus);
  useEffect(() => copilotkit.subscribe({
    onAgentRunStarted: () => {
      seen.copilotkitRuns++;
      changed();
    },
  }).unsubscribe, [copilotkit]);

  const run = () => {
    seen.outcome = 'running';
    changed();
    copilotkit.runAgent({ agent: shown }).then(
      () => { seen.outcome = 'finished'; },
      (error) => { seen.outcome = 'failed'; seen.error = String(error?.message ?? error); },
    ).finally(changed);
  };

  const state = shown.state ?? {};
  const proposal = state.proposal ?? {};
  return (
    <main style={{ font: '15px system-ui, sans-serif', margin: 24, maxWidth: 720 }}>
      <h1 style={{ fontSize: 20 }}>CopilotKit + StateSyncHttpAgent</h1>
      <p>
        <button data-testid="run" onClick={run} disabled={shown.isRunning || seen.outcome === 'running'}>Run</button>{' '}
        status <b data-testid="status" data-status={status}>{status}</b>
      </p>
      <table style={{ borderCollapse: 'collapse' }}>
        <tbody>
          <Row label="recipient" id="recipient">{proposal.recipient ?? '—'}</Row>
          <Row label="amount" id="amount">{proposal.amount ?? '—'}</Row>
          <Row label="counter" id="counter">{state.counter ?? '—'}</Row>
          <Row label="last seq" id="last-seq">{String(sync.lastSeq)}</Row>
          <Row label="useAgent() is our agent" id="same">{String(shown === agent)}</Row>
          <Row label="connection" id="link">{seen.link}</Row>
          <Row label="connections / reconnects" id="connections">{`${seen.connections} / ${seen.retries}`}</Row>
          <Row label="reconnected at counter" id="reconnected-at">{seen.reconnectedAt.join(', ') || '—'}</Row>
          <Row label="RUN_STARTED seen" id="run-started">{seen.runStarted}</Row>
          <Row label="CopilotKit runs" id="copilotkit-runs">{seen.copilotkitRuns}</Row>
          <Row label="RUN_FINISHED / failed" id="run-finished">{`${seen.runFinished} / ${seen.runFailed}`}</Row>
          <Row label="runAgent()" id="outcome">{seen.outcome}{seen.error ? `: ${seen.error}` : ''}</Row>
        </tbody>
      </table>
      <pre data-testid="state-json" style={{ whiteSpace: 'pre-wrap', fontSize: 12 }}>{JSON.stringify(state)}</pre>
    </main>
  );
}

const root = createRoot(document.getElementById('root'));
agent.ready.then(
  () => {
    root.render(
      <CopilotKitProvider selfManagedAgents={selfManagedAgents}>
        <Panel />
      </CopilotKitProvider>,
    );
    window.__e2e.ready = true;
  },
  (error) => {
    window.__e2e.loadError = String(error?.message ?? error);
    root.render(<p data-testid="load-error">{window.__e2e.loadError}</p>);
  },
);
