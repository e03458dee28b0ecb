// What one StateSyncHttpAgent.run() hands to @ag-ui/client's pipeline, from
// the engine's outcomes over every connection of that run. One runAgent()
// call may span several connections (a cut, a resync), and @ag-ui/client's
// verifyEvents allows exactly one RUN_STARTED and nothing after RUN_FINISHED,
// so this is where a reconnect's repetitions are dropped:
//  - an event whose SSE `id:` was already delivered in this run (a server that
//    replays from an earlier point with stable ids);
//  - a RUN_STARTED that arrives on a later connection while the run is active
//    and is not a replay by id: the server started the run over, so the text
//    messages, tool calls, reasoning and steps the cut left open will never be
//    closed by it; they are closed here (otherwise RUN_FINISHED would fail
//    verification) and the RUN_STARTED itself is dropped;
//  - everything but state on a connection made after the run finished: such a
//    connection only heals the state (the engine was resyncing), and a plain
//    server answers it by running the agent again.
// RUN_FINISHED / RUN_ERROR is held until the run's last connection ends, so
// state healed after it still reaches the pipeline before it. State events
// ('applied' outcomes) are delivered as received, keyed to the engine's state
// after them (AppliedStates), however many connections it took.

import { laneOf, OpenLanes } from '../shared/event-lanes.js';

const MAX_IDS = 10000; // delivered SSE ids remembered per run (oldest forgotten first)
const TERMINAL = new Set(['RUN_FINISHED', 'RUN_ERROR']);

// Closing order: innermost first (a tool call inside a message inside a step).
const CLOSE_WITH = [
  ['tool', 'TOOL_CALL_END', 'toolCallId'],
  ['text', 'TEXT_MESSAGE_END', 'messageId'],
  ['reasoning-message', 'REASONING_MESSAGE_END', 'messageId'],
  ['reasoning', 'REASONING_END', 'messageId'],
  ['step', 'STEP_FINISHED', 'stepName'],
];

/**
 * The engine's (visible) state after each state event handed to the pipeline,
 * keyed by the event's `metadata` object: @ag-ui/client's stages rebuild event
 * objects (schema parsing) but pass `metadata` through by reference (it is an
 * opaque value in @ag-ui/core's schema), so the key survives to the apply stage.
 *
 * A local edit (agent.edit) moves agent.state at once. A state event the
 * engine applied before that edit but the pipeline reaches after it carries a
 * state without the edit: applying it would take the user's value away until
 * the next event. So such a state stands only for the latest event, replaced
 * by the current state (which has the edit); an earlier one leaves
 * agent.state where it is.
 */
export class AppliedStates {
  #byMetadata = new WeakMap(); // metadata -> { state, edits: the local-edit count when it was registered }
  #localEdits = 0;
  #latestMetadata = null;
  /** The state of the last state event handed to the pipeline, or of the last local edit (undefined before either). */
  latest = undefined;

  register(metadata, state) {
    this.#byMetadata.set(metadata, { state, edits: this.#localEdits });
    this.#latestMetadata = metadata;
    this.latest = state;
  }

  /** A local edit made `state` the current state. */
  noteLocalEdit(state) {
    this.#localEdits++;
    this.latest = state;
  }

  /**
   * { found, state }: the engine's state after `event`, or the latest one for
   * an event the engine never saw; state undefined: leave agent.state as it is.
   */
  lookup(event) {
    const metadata = event?.metadata;
    if (metadata === null || typeof metadata !== 'object' || !this.#byMetadata.has(metadata)) {
      return { found: false, state: this.latest };
    }
    const entry = this.#byMetadata.get(metadata);
    if (entry.edits === this.#localEdits) return { found: true, state: entry.state };
    return { found: true, state: metadata === this.#latestMetadata ? this.latest : undefined };
  }
}

export class RunDelivery {
  #emit;
  #applied;
  #connection = 0; // attempt number of the current connection
  #runConnection = 0; // the connection that delivered RUN_STARTED (0: none yet)
  #active = false; // RUN_STARTED delivered, no terminal event yet
  #terminal = null; // the held RUN_FINISHED / RUN_ERROR
  #terminalConnection = 0;
  #ids = new Set();
  #lanes = new OpenLanes(); // what the run's events opened and did not close yet

  /** `emit(event)` hands an event to the pipeline; `applied` is the agent's AppliedStates. */
  constructor(emit, applied) {
    this.#emit = emit;
    this.#applied = applied;
  }

  /** A new connection (attempt number) starts. */
  connection(attempt) {
    this.#connection = attempt;
  }

  /** True once RUN_ERROR was seen: the run is over whatever the state says. */
  get errored() {
    return this.#terminal?.type === 'RUN_ERROR';
  }

  /** One engine outcome, with the SSE id of its event (or null). */
  handle(outcome, id) {
    if (outcome.kind === 'applied' && outcome.messageId !== undefined) this.#activity(outcome);
    else if (outcome.kind === 'applied') this.#state(outcome);
    else if (outcome.kind === 'event') this.#event(outcome.event, id);
    // 'resync', 'ignored' and 'error' are the engine's business: nothing the
    // engine held, ignored or refused reaches the pipeline.
  }

  /** The run's last connection ended: hands over the held terminal event. Returns whether there was one. */
  finish() {
    const terminal = this.#terminal;
    this.#terminal = null;
    if (terminal) this.#emit(terminal);
    return terminal !== null;
  }

  #state(outcome) {
    const event = outcome.event;
    const has = event.metadata !== null && typeof event.metadata === 'object' && !Array.isArray(event.metadata);
    // Every state event carries a metadata object (an empty one when the
    // server sent none): it is the key to the engine's state after it.
    const delivered = has ? event : { ...event, metadata: {} };
    this.#applied.register(delivered.metadata, outcome.state);
    this.#emit(delivered);
  }

  // An activity change the engine applied (createStateSync({ activities: true });
  // docs/wire.md section 11): the pipeline gets it as the snapshot of the
  // engine's verified content after it, so agent.messages shows that content,
  // never @ag-ui/client's own patch of its own copy (which drops a delta for a
  // messageId it does not know and keeps the old content when a patch fails).
  // An activity the engine holds back or resyncs reaches the pipeline at its
  // next verified content.
  #activity(outcome) {
    const { patch, ...rest } = outcome.event;
    this.#emit({ ...rest, type: 'ACTIVITY_SNAPSHOT', content: outcome.content, replace: true });
  }

  #event(event, id) {
    if (this.#terminal) {
      // A new run announced on the stream that finished the last one goes on;
      // anything else after the end of the run is not delivered.
      if (event.type !== 'RUN_STARTED' || this.#connection !== this.#terminalConnection) return;
      this.finish();
    }
    if (id !== null) {
      if (this.#ids.has(id)) return;
      this.#remember(id);
    }
    if (event.type === 'RUN_STARTED' && this.#active && this.#connection !== this.#runConnection) {
      this.#closeOpenLanes(); // not a replay by id (that returned above): the server started over
      return;
    }
    if (TERMINAL.has(event.type)) {
      this.#active = false;
      this.#terminal = event;
      this.#terminalConnection = this.#connection;
      return;
    }
    if (event.type === 'RUN_STARTED') {
      this.#active = true;
      this.#runConnection = this.#connection;
      this.#lanes.clear();
    }
    this.#lanes.see(event);
    this.#emit(event);
  }

  #remember(id) {
    this.#ids.add(id);
    if (this.#ids.size > MAX_IDS) this.#ids.delete(this.#ids.values().next().value);
  }

  // The server started the run over: close what the cut left open, innermost first.
  #closeOpenLanes() {
    for (const [lane, type, field] of CLOSE_WITH) {
      for (const opener of this.#lanes.openers()) {
        const open = laneOf(opener);
        if (open.lane !== lane) continue;
        this.#lanes.close(open.key);
        const close = { type, [field]: opener[field] };
        if (opener.subagentRunId !== undefined) close.subagentRunId = opener.subagentRunId;
        this.#emit(close);
      }
    }
  }
}
