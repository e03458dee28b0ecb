// sequenceState(): an @ag-ui/client Middleware for servers that already run
// AG-UI agents (CopilotKit's runtime, an express handler around agent.run()).
// It stamps the wrapped agent's state events with seq / baseSeq / epoch /
// digest from ONE StateEmitter per threadId, and answers a client's
// forwardedProps.stateSync at the start of each run with a replay or a
// snapshot (server.js catchUp). Every other event passes through unchanged.
//
// Per run, before the catch-up, the thread's emitter moves to
// RunAgentInput.state (the state this run of the agent starts from): the
// agent's later deltas are relative to it, so they apply to the emitter as
// they do to the agent. A client that sent stateSync receives that move
// through the catch-up; one that did not (a plain HttpAgent) already holds
// that state and is sent nothing for it.
//
// A run that carries the client's edits (forwardedProps.stateSync.edits,
// docs/wire.md section 9) has them judged by the thread's emitter first
// (options.edits: { ownership, onConflict }); the agent then runs on the
// emitter's state with the accepted edits as RunAgentInput.state, and the
// verdicts reach the client in its catch-up. A thread this middleware has no
// state of yet starts from the client's state, which already holds its edits:
// they are not judged (applying them again could apply them twice).
//
// The agent's activity events (ACTIVITY_SNAPSHOT / ACTIVITY_DELTA, docs/wire.md
// section 11) are stamped on the thread emitter's activities, each messageId
// on its own line; a client that says where its activities are gets their
// catch-up after the state's.
//
// An agent delta that does not apply to the thread's state (or a state the
// emitter refuses) means the agent and what it has said are no longer the
// same: nothing goes out for it, and every later delta of the run is dropped
// too (each assumes a state nobody can vouch for), until the agent's next
// STATE_SNAPSHOT, which re-establishes the state (sent as a delta or snapshot
// from the last state the clients hold). options.onInconsistent hears of each
// dropped event (default: one console.warn per run).
//
// Another writer of the thread meanwhile (another run's client edits, or
// another instance on a store): only what the agent changed goes on top of the
// thread's state (its delta, else what its state changed since its previous
// one), so the other's writes stand where the agent did not write. These
// decisions are the core's (src/emit/upstream_cursor.h), shared with Python's
// sequence_state.
import { Middleware } from '@ag-ui/client';
import { UpstreamCursor } from '../server/upstream-cursor.js';
import { Observable } from 'rxjs';
import { checkEditPolicy } from '../shared/edit-policy.js';
import { createStateEmitter } from '../server/emitter.js';
import { after } from '../server/emitter-writes.js';
import { syncTypeError } from '../engine/errors.js';
import { emitterOptions } from '../server/emitter-options.js';
import { clientEpoch, judgeEdits, readRunEdits } from '../server/run-edits.js';
import { catchUp } from '../server/catch-up.js';
import { kActivitiesInUse, kActivityStream, kCommitThrough } from '../engine/internals.js';
import { checkStore } from '../server/store/contract.js';

const DEFAULT_MAX_THREADS = 1000;
const DEFAULT_IDLE_TTL_MS = 30 * 60 * 1000;


function once(fn) {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

function positiveInteger(value, name, fallback) {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw syncTypeError('invalid-options', `sequenceState() ${name} must be a positive integer`);
  return value;
}

function middlewareOptions(options) {
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options))) {
    throw syncTypeError('invalid-options', 'sequenceState() options must be an object');
  }
  const { maxThreads, idleTtlMs, emitter = {}, edits, onInconsistent, store, ...rest } = options ?? {};
  const unknown = Object.keys(rest);
  if (unknown.length) throw syncTypeError('invalid-options', `unknown sequenceState() option ${JSON.stringify(unknown[0])}`);
  if (emitter === null || typeof emitter !== 'object') throw syncTypeError('invalid-options', 'sequenceState() emitter must be an object');
  // Each thread's emitter gets its own random epoch: an evicted thread starts
  // counting again, and a shared epoch would let clients take the new count for the old.
  if (emitter.epoch !== undefined || emitter.initialState !== undefined) {
    throw syncTypeError('invalid-options', 'sequenceState() sets each thread\'s epoch and initial state itself');
  }
  emitterOptions(emitter); // throws for a wrong emitter option now rather than at the first run
  if (onInconsistent !== undefined && typeof onInconsistent !== 'function') {
    throw syncTypeError('invalid-options', 'sequenceState() onInconsistent must be a function');
  }
  return {
    maxThreads: positiveInteger(maxThreads, 'maxThreads', DEFAULT_MAX_THREADS),
    idleTtlMs: positiveInteger(idleTtlMs, 'idleTtlMs', DEFAULT_IDLE_TTL_MS),
    emitter,
    edits: checkEditPolicy(edits, 'sequenceState() edits'),
    onInconsistent,
    // Each thread's emitter bound to its threadId in this store: restarts and other instances continue it.
    store: store === undefined ? undefined : checkStore(store, 'sequenceState() store'),
  };
}

// The threads' emitters: least recently used first (Map order), at most
// maxThreads idle ones kept, none kept idle longer than idleTtlMs. An emitter
// in use by a run is never evicted.
class ThreadEmitters {
  #entries = new Map(); // threadId -> { ready: Promise<StateEmitter>, emitter, users, lastUsed }
  #options;
  #timer = null;

  constructor(options) {
    this.#options = options;
  }

  /**
   * The thread's entry (created from `initialState` if new), counted as in use
   * until release(): { entry, fresh } (fresh: created by this call).
   */
  async acquire(threadId, initialState) {
    this.#sweep();
    let entry = this.#entries.get(threadId);
    const fresh = entry === undefined;
    if (entry) this.#entries.delete(threadId); // re-inserted below: most recently used
    else {
      const { emitter, store } = this.#options;
      const bound = store === undefined ? {} : { store, key: threadId };
      const ready = createStateEmitter({ ...emitter, ...bound, initialState: initialState ?? {} });
      entry = { ready, emitter: null, users: 0, lastUsed: Date.now() };
    }
    this.#entries.set(threadId, entry);
    entry.users++;
    try {
      entry.emitter = await entry.ready;
    } catch (error) {
      entry.users--;
      if (this.#entries.get(threadId) === entry) this.#entries.delete(threadId);
      throw error;
    }
    this.#startTimer();
    return { entry, fresh };
  }

  release(entry) {
    entry.users--;
    entry.lastUsed = Date.now();
    this.#sweep();
  }

  /** The thread's StateEmitter, or null (not created yet, or evicted). */
  get(threadId) {
    return this.#entries.get(threadId)?.emitter ?? null;
  }

  get size() {
    return this.#entries.size;
  }

  dispose() {
    clearInterval(this.#timer);
    this.#timer = null;
    for (const entry of this.#entries.values()) entry.ready.then((emitter) => emitter.dispose(), () => {});
    this.#entries.clear();
  }

  // Drops idle entries past the TTL, then the least recently used idle ones above maxThreads.
  #sweep() {
    const { maxThreads, idleTtlMs } = this.#options;
    const now = Date.now();
    let excess = this.#entries.size - maxThreads;
    for (const [threadId, entry] of this.#entries) {
      if (entry.users > 0 || entry.emitter === null) continue;
      if (excess > 0 || now - entry.lastUsed >= idleTtlMs) {
        this.#entries.delete(threadId);
        entry.emitter.dispose();
        excess--;
      }
    }
    if (this.#entries.size === 0 && this.#timer !== null) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
  }

  // Idle threads expire even when no run comes to sweep them. Never keeps a process alive.
  #startTimer() {
    if (this.#timer !== null) return;
    this.#timer = setInterval(() => this.#sweep(), Math.min(this.#options.idleTtlMs, 60000));
    this.#timer.unref?.();
  }
}

// One run's events through the thread's emitter. How each agent state event
// goes on is the core's decision (UpstreamCursor, server/upstream-cursor.js),
// which writes a plain emitter itself in the call that plans (planWrite: a
// snapshot parsed once, as Python's sequence_state does); this class orders the run (the move to its input state, the catch-up after
// RUN_STARTED) and carries the agent's other fields onto the stamped events.
class RunStamper {
  #emitter;
  #cursor;
  #input;
  #report;
  #started = false; // the catch-up went out
  #stream = null; // the run's stream of the thread's activities, once it needs one

  constructor(emitter, cursor, input, report) {
    this.#emitter = emitter;
    this.#cursor = cursor;
    this.#input = input;
    this.#report = report;
  }

  /** The events to send for one event of the agent. The catch-up follows its RUN_STARTED. */
  handle(event) {
    if (this.#started) return this.#events(event);
    if (event?.type === 'RUN_STARTED') return after(this.#prelude(), (prelude) => [event, ...prelude]);
    return after(this.#prelude(), (prelude) => after(this.#events(event), (events) => [...prelude, ...events]));
  }

  #events(event) {
    if (event?.type === 'ACTIVITY_SNAPSHOT' || event?.type === 'ACTIVITY_DELTA') return this.#activity(event);
    return after(this.#cursor.write(this.#emitter, event), (written) => {
      if (!written.state) return written.events;
      if (written.dropped !== null) {
        this.#report(event, written.error);
        return [];
      }
      return this.#carry(event, written.events);
    });
  }

  // An activity event: stamped on the thread's activities, as the core decides
  // (ActivityFacade: a delta that does not apply drops that activity's deltas until its next snapshot).
  // A store-bound thread's activities answer once the store holds the write (a Promise).
  #activity(event) {
    return after(this.#emitter.activities.write(event, { stream: this.#activityStream() }), (written) => {
      if (written.dropped !== null) this.#report(event, written.error);
      return written.events;
    });
  }

  // Which activities this run's client holds a position for (its first event of another is the snapshot).
  #activityStream() {
    this.#stream ??= this.#emitter.activities[kActivityStream]();
    return this.#stream;
  }

  /** Frees the run's activity stream. */
  dispose() {
    this.#stream?.dispose();
  }

  // At the start of the run: the emitter moves to the run's input state (a
  // thread of its own; a store-bound one never writes a client's state: the
  // core's UpstreamCursor::writesInput), then the client that asked
  // (forwardedProps.stateSync) gets its catch-up.
  #prelude() {
    this.#started = true;
    const input = this.#input;
    let refusal = null;
    const refused = (error) => {
      refusal = error; // the agent's deltas will be relative to a state the emitter could not take
      this.#report({ type: 'STATE_SNAPSHOT', snapshot: input.state }, error);
    };
    let moved;
    if (input.state !== undefined && this.#cursor.writesInput()) {
      try {
        moved = this.#emitter.update(input.state);
        if (typeof moved?.then === 'function') moved = moved.catch(refused);
      } catch (error) {
        refused(error);
      }
    }
    // Where the agent starts: the thread's state, else apart from the client's (the core decides).
    const begin = () => {
      const line = typeof this.#emitter[kCommitThrough] === 'function' ? this.#emitter.epoch : null; // a store-bound emitter's
      this.#cursor.startRun(input.state, this.#emitter.state, this.#emitter.seq, line);
      if (refusal !== null) this.#cursor.suspend();
    };
    const asked = input.forwardedProps?.stateSync;
    if (asked === null || typeof asked !== 'object') return after(moved, () => { begin(); return []; });
    // A store-bound thread's activities may be stored by another instance: its catch-up finds them.
    const durable = typeof this.#emitter[kCommitThrough] === 'function';
    const stream = durable || this.#emitter[kActivitiesInUse]?.() ? this.#activityStream() : undefined;
    return after(moved, () => after(catchUp(this.#emitter, input, stream), (answer) => { begin(); return answer.events; }));
  }

  #carry(event, stamped) {
    // The agent's payload and any top-level seq fields give way to the emitter's; its other fields ride along,
    // but never one AG-UI 1.0 ends a run on: a null where a field is optional, a timestamp that is not an integer.
    const { type, snapshot, delta, metadata, seq, base_seq: baseSeq, ...rest } = event;
    const own = metadata !== null && typeof metadata === 'object' ? metadata : {};
    const fields = Object.fromEntries(Object.entries(rest).filter(([name, value]) => value !== null
      && (name !== 'timestamp' || Number.isSafeInteger(value))));
    return stamped.map((e) => ({ ...fields, ...e, metadata: { ...own, ...e.metadata } }));
  }
}


export class SequenceStateMiddleware extends Middleware {
  #threads;
  #onInconsistent;
  #edits; // the edit policy
  #maxDepth; // the emitters' (edits nested deeper are a bad request)
  #engineOptions; // the emitter module's wasmBinary / locateFile, for the run cursors

  constructor(options) {
    super();
    const checked = middlewareOptions(options);
    this.#threads = new ThreadEmitters(checked);
    this.#onInconsistent = checked.onInconsistent;
    this.#edits = checked.edits;
    this.#maxDepth = checked.emitter.maxDepth;
    this.#engineOptions = { wasmBinary: checked.emitter.wasmBinary, locateFile: checked.emitter.locateFile };
  }

  run(input, next) {
    return new Observable((subscriber) => {
      let inner = null;
      let release = null; // this run's hold on the thread's emitter
      let closed = false;
      let edits;
      try {
        edits = readRunEdits(input, { maxDepth: this.#maxDepth }); // a hostile list: an error (400) before anything is set up
      } catch (error) {
        subscriber.error(error);
        return undefined;
      }
      const threadId = String(input?.threadId ?? '');
      // A store-bound thread may be written by another instance between two of this run's writes:
      // every state event goes as the agent's own change, rebased (issue 40).
      const acquired = this.#threads.acquire(threadId, input?.state);
      const cursor = acquired.then(({ entry }) => UpstreamCursor.create({
        maxDepth: this.#maxDepth, alwaysRebase: typeof entry.emitter?.[kCommitThrough] === 'function',
      }, this.#engineOptions));
      Promise.all([acquired, cursor]).then(([{ entry, fresh }, runCursor]) => {
        let stamper = null;
        release = once(() => {
          stamper?.dispose();
          runCursor.dispose();
          this.#threads.release(entry);
        });
        if (closed) return release();
        const start = (runInput) => {
          if (closed) return;
          stamper = new RunStamper(entry.emitter, runCursor, runInput, this.#reporter(input));
          inner = this.#relay(next.run(runInput), stamper, subscriber);
        };
        try {
          const started = after(this.#withEdits(input, edits, entry.emitter, fresh), start);
          if (typeof started?.then === 'function') started.catch((error) => subscriber.error(error));
        } catch (error) {
          subscriber.error(error); // the edits could not be judged, or the agent's run() threw
        }
      }, (error) => {
        cursor.then((c) => c.dispose(), () => {});
        subscriber.error(error);
      });
      return () => {
        closed = true;
        inner?.unsubscribe();
        release?.();
      };
    });
  }

  /** The StateEmitter of `threadId` (its seq, state, stats), or null. */
  emitterFor(threadId) {
    return this.#threads.get(String(threadId));
  }

  /** Threads currently kept. */
  get threads() {
    return this.#threads.size;
  }

  /** Frees every thread's emitter. */
  dispose() {
    this.#threads.dispose();
  }

  // The input the agent runs on when the client sent edits: their verdicts are
  // in the emitter (and reach the client in its catch-up), their effect is in
  // `state`, and they are not passed on (an agent that applied them again
  // would apply them twice). A fresh thread's emitter starts from the client's
  // state, which holds them already: they are not judged.
  #withEdits(input, edits, emitter, fresh) {
    if (edits === null) return input;
    const judged = fresh ? undefined : judgeEdits(emitter, edits, clientEpoch(input), this.#edits);
    return after(judged, () => {
      const state = fresh ? input.state : structuredClone(emitter.state); // the agent's to mutate
      const stateSync = { ...input.forwardedProps.stateSync };
      delete stateSync.edits;
      return { ...input, state, forwardedProps: { ...input.forwardedProps, stateSync } };
    });
  }

  // The agent's events through the stamper to `subscriber`; returns the subscription.
  // With a store-bound emitter stamping is async: from the first such event on,
  // every event (and the end) waits its turn in `queue`, so the order holds.
  #relay(events$, stamper, subscriber) {
    let queue = null;
    const emit = (out) => {
      for (const e of out) subscriber.next(e);
    };
    const handle = (event) => {
      let out;
      try {
        out = stamper.handle(event);
      } catch (error) {
        return subscriber.error(error);
      }
      if (typeof out?.then === 'function') return out.then(emit, (error) => subscriber.error(error));
      return emit(out);
    };
    const turn = (fn) => {
      if (queue) queue = queue.then(fn);
      else if (typeof (queue = fn())?.then !== 'function') queue = null;
    };
    return events$.subscribe({
      next: (event) => turn(() => handle(event)),
      error: (error) => turn(() => subscriber.error(error)),
      complete: () => turn(() => subscriber.complete()),
    });
  }

  #reporter(input) {
    let warned = false;
    return (event, error) => {
      const info = { threadId: input?.threadId, runId: input?.runId, event, error, reason: error ? 'refused' : 'suspended' };
      if (this.#onInconsistent) return this.#onInconsistent(info);
      if (warned) return;
      warned = true;
      const next = event.type?.startsWith('ACTIVITY_') ? `ACTIVITY_SNAPSHOT of ${event.messageId}` : 'STATE_SNAPSHOT';
      console.warn(`agui-state-sync: sequenceState: run ${input?.runId} of thread ${input?.threadId} sent a ${event.type} that does not apply`
        + ` (${error?.message ?? 'after an earlier one'}); its deltas are dropped until its next ${next}`);
    };
  }
}

/**
 * An @ag-ui/client Middleware that sequences the wrapped agent's state events
 * per thread, answers forwardedProps.stateSync and judges its edits. options:
 * maxThreads (1000), idleTtlMs (30 min), emitter (createStateEmitter options
 * but epoch / initialState), edits ({ ownership, onConflict }: the policy
 * clients' edits are judged by), onInconsistent({ threadId, runId, event, error, reason }),
 * store (memoryStore() / redisStore() from agui-state-sync/server: each thread's emitter is bound to
 * its threadId there, so a restart or another instance continues the thread's seq and epoch).
 */
export function sequenceState(options) {
  return new SequenceStateMiddleware(options);
}
