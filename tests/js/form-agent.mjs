// A stateless AG-UI agent that knows nothing about agui-state-sync, for the
// edit tests of the proxy and sequenceState(): each run starts from
// RunAgentInput.state (as AG-UI agents do), announces it with an unsequenced
// STATE_SNAPSHOT, makes its scripted writes as unsequenced STATE_DELTAs (the
// AG-UI docs' pattern) and finishes. `plan(input, index)` gives the index-th
// run's steps: [{ ops, gate?, snapshot? }] (gate: a Promise awaited before
// the step; snapshot: send the new state as a STATE_SNAPSHOT, not the ops).
// Served over HTTP with the real @ag-ui/encoder. Not a test file itself.
import { AbstractAgent } from '@ag-ui/client';
import { Observable } from 'rxjs';
import { sseHead, startServer } from './ag-ui-support.mjs';
import { applyOps } from './edit-oracle.mjs';

export class FormAgent extends AbstractAgent {
  inputs = []; // every RunAgentInput it ran on, as received
  #plan;

  constructor(plan = () => []) {
    super({});
    this.#plan = plan;
  }

  run(input) {
    const index = this.inputs.length;
    this.inputs.push(structuredClone(input));
    const steps = this.#plan(input, index);
    return new Observable((subscriber) => {
      let stopped = false;
      (async () => {
        let state = structuredClone(input.state ?? {});
        subscriber.next({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
        subscriber.next({ type: 'STATE_SNAPSHOT', snapshot: state });
        for (const step of steps) {
          if (step.gate) await step.gate;
          if (stopped) return;
          const next = applyOps(state, step.ops);
          if (next.failed) throw new Error(`the form agent's own step failed: ${next.failed}`);
          state = next.doc;
          // snapshot: a snapshot-only backend's way of saying the same.
          subscriber.next(step.snapshot ? { type: 'STATE_SNAPSHOT', snapshot: structuredClone(state) } : { type: 'STATE_DELTA', delta: step.ops });
        }
        subscriber.next({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
        subscriber.complete();
      })().catch((error) => subscriber.error(error));
      return () => {
        stopped = true;
      };
    });
  }
}

/** A FormAgent behind an HTTP endpoint: { url, agent, requests, close() }. */
export async function startFormUpstream(plan) {
  const agent = new FormAgent(plan);
  const server = await startServer(({ input, res, encoder }) => {
    sseHead(res, encoder);
    const subscription = agent.run(input).subscribe({
      next: (event) => res.write(encoder.encode(event)),
      error: () => res.destroy(),
      complete: () => res.end(),
    });
    res.on('close', () => subscription.unsubscribe());
  });
  return { ...server, agent };
}

/** A promise with its resolve function: { promise, open() }. */
export function gate() {
  let open;
  const promise = new Promise((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
