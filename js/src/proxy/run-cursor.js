// One proxy run's cursor on its thread's emitter. How each state change the
// upstream engine applied goes on top of the thread's state (in step: the
// upstream's own ops or update(); out of step: only what it changed; a delta
// that no longer fits: dropped until its next snapshot) is the core's decision
// (UpstreamCursor, src/emit/upstream_cursor.h, via server/upstream-cursor.js),
// the one sequenceState() and Python's sequence_state carry out too. What is
// the proxy's own stays here: the state its engine verified. A run forwarded
// a state that is not the thread's (a client's own; the proxy does not write
// it to the thread) is out of step from the start, and until its first write
// the cursor is handed the upstream's whole verified state, measured from the
// thread's: the upstream may not have started from the client's state at all
// (a stateful agent keeps its own). A thread with no vouched state yet has its
// placeholder replaced by the upstream's first state whole; a store-bound one
// is begun apart from nothing, since another instance may begin it first.
import { failureError } from '../engine/errors.js';
import { after } from '../server/emitter-writes.js';
import { UpstreamCursor } from '../server/upstream-cursor.js';

// (The values are CursorFacade::writeReceived's modes.)
const BEGUN = 0;
const NOT_BEGUN = 1;
const APART = 2; // begun out of step: the upstream's first write goes as its whole state

/**
 * Where the upstream of a run on `thread` starts, read when the run starts
 * (`input`: the RunAgentInput forwarded): { base: the state its deltas apply
 * to until it sends a snapshot, start(cursor): begins the cursor from the
 * thread's state (NOT_BEGUN while the thread has none vouched: the run's first write begins it) }.
 */
export function upstreamStart(thread, input) {
  // What else the upstream may have started from (issue 40): the upstream's own last state of the
  // thread as this instance saw it end its previous run (a stateful agent keeps its own between
  // runs), and the client's state it was sent instead of the thread's. Its first snapshot then goes
  // on top only by what it changed from all of them (the core's UpstreamCursor::addStart).
  const starts = (cursor, sent) => {
    if (thread.upstreamView !== undefined) cursor.addStart(thread.upstreamView);
    if (sent) cursor.addStart(input.state);
  };
  if (!thread.vouched) {
    if (!thread.durable) return { base: input.state ?? {}, start: () => NOT_BEGUN };
    // Nothing stored when the run began, but another instance's run may begin the thread first:
    // the upstream's first state goes on top of whatever is there by what it changed from its
    // starts (on a thread still empty, that is all of it).
    return { base: input.state ?? {}, start: (cursor) => (cursor.beginApart({}), starts(cursor, input.state !== undefined), APART) };
  }
  const { seq, epoch } = thread.emitter;
  const view = thread.state;
  const same = input.state === undefined || input.state === view || JSON.stringify(input.state) === JSON.stringify(view);
  // own: the base is the thread emitter's state (what its prompt render reads where it is).
  if (same) return { base: input.state ?? view, own: true, start: (cursor) => (cursor.begin(view, false, seq, thread.durable ? epoch : null), starts(cursor, false), BEGUN) };
  return { base: input.state, start: (cursor) => (cursor.beginApart(view), starts(cursor, true), APART) };
}

export class RunCursor {
  #cursor;
  #thread;
  #mode = NOT_BEGUN;

  /** @internal use RunCursor.create() */
  constructor(cursor, thread) {
    this.#cursor = cursor;
    this.#thread = thread;
  }

  /** The cursor of a run on `thread`, begun by `start` (upstreamStart()'s); `maxDepth`: the thread emitters'. */
  static async create(thread, start, maxDepth) {
    const run = new RunCursor(await UpstreamCursor.create({ alwaysRebase: thread.durable, maxDepth }), thread);
    run.#begin(() => start(run.#cursor));
    return run;
  }

  /**
   * The events that carry `outcome` (an 'applied' state outcome of the run's
   * RelayEngine) on `emitter`, or a Promise of them for a store-bound one;
   * [] for a state the same upstream event's last one covers (before the
   * run's first write). Throws (rejects) with the refusal when it cannot be
   * written.
   */
  write(emitter, outcome) {
    return after(this.#cursor.writeReceived(emitter, outcome.received, outcome.ref, this.#mode), (written) => {
      if (written.later) return [];
      if (written.dropped === null) {
        this.#mode = BEGUN;
        return written.events;
      }
      // (A drop with no refusal behind it: the cursor already suspended the upstream's deltas.)
      throw written.error ?? failureError({ code: written.dropped }, 'patch-failed', 'the upstream\'s deltas are dropped until its next snapshot');
    });
  }

  /**
   * At the end of the run: keeps the upstream's own last state on the thread
   * (its next run's start, wherever that runs: a Promise for a store-bound
   * thread, settled once stored or failed, which `report` hears of).
   */
  keepView(report) {
    const view = this.#agentView();
    return view === undefined ? undefined : this.#thread.keepUpstreamView(view, report);
  }

  /** Frees the engine object, keeping the upstream's own last state on the thread (in memory). Idempotent. */
  dispose() {
    const view = this.#agentView();
    if (view !== undefined) this.#thread.upstreamView = view;
    this.#thread = null;
    this.#cursor.dispose();
  }

  // The upstream's own state at the end of its run, if it sent one (undefined once disposed).
  #agentView() {
    if (this.#thread === null) return undefined;
    try {
      return this.#cursor.agentView();
    } catch {
      return undefined; // (a disposed engine: nothing to keep)
    }
  }

  // A state the core cannot hold (nested too deep): the upstream's deltas wait for its next snapshot.
  #begin(start) {
    try {
      this.#mode = start();
    } catch {
      this.#cursor.suspend();
      this.#mode = BEGUN;
    }
  }
}
