// The thread's log as the agent wrote it: every event of every run, in
// order, before the fault injector (faults are per connection; the log is
// the truth). The run history reads it (GET /log: JSON Lines from the
// package's serializeLog) and a branch starts from it (branchFrom).
//
// A run's RUN_STARTED echoes its RunAgentInput's threadId, runId,
// parentRunId and messages (AG-UI's RUN_STARTED.input), so the history can
// say what started each run. Where each run ended (seq, epoch, digest) is
// kept beside the log, as the agent saw it, so a test can check what a
// replay of the log says against the agent's own record.
import { serializeLog } from './pkg.mjs';

export const MAX_LOG_EVENTS = 50000; // a demo thread is a few hundred per run

export class ThreadLog {
  constructor(threadId) {
    this.threadId = threadId;
    this.events = [];
    this.runs = new Map(); // runId -> { runId, parentRunId, seq, epoch, digest, ended }
  }

  append(event) {
    this.events.push(event);
  }

  get full() {
    return this.events.length >= MAX_LOG_EVENTS;
  }

  hasRun(runId) {
    return this.runs.has(runId);
  }

  runStarted(runId, parentRunId, input) {
    const messages = Array.isArray(input && input.messages) ? input.messages : [];
    const lineage = parentRunId ? { parentRunId } : {};
    this.append({ type: 'RUN_STARTED', threadId: this.threadId, runId, ...lineage, input: { threadId: this.threadId, runId, ...lineage, messages, tools: [], context: [] } });
    this.runs.set(runId, { runId, parentRunId: parentRunId ?? null, ended: null });
  }

  runEnded(runId, end) {
    const run = this.runs.get(runId);
    if (run) run.ended = end;
  }

  /** Where each run ended, in log order: { runId, parentRunId, ended: { seq, epoch, digest } | null }. */
  ends() {
    return [...this.runs.values()];
  }

  /** The log from event `from` on (a reader that has the first `from` appends the rest). */
  text(from = 0) {
    return serializeLog(from === 0 ? this.events : this.events.slice(from));
  }
}
