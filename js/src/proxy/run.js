// One upstream run this instance holds, as its clients see it (run-stream.js:
// the log and the attached connections): the events it sends are numbered,
// framed and committed, then published. Committed means logged here, or, with
// a stored log (stored-run-log.js: the proxy's Redis store), appended to the
// run's log in Redis first: nothing reaches a client that another instance
// could not serve too. It is aborted only by an explicit abort, or when no
// client (here or, with a stored log, at another instance) came back within
// graceMs; a stored log whose lease this instance lost ends it as 'run-lost'.
import { LogEntry } from './event-log.js';
import { runError, TERMINAL_TYPES } from './events.js';
import { formatEventId, frameEvent, heartbeatLine } from './sse-out.js';
import { RunStream } from './run-stream.js';
import { after } from '../server/emitter-writes.js';
import { wireSeq } from '../engine/wire-meta.js';

const isStateEvent = (event) => event.type === 'STATE_SNAPSHOT' || event.type === 'STATE_DELTA';

export class Run extends RunStream {
  seq = null; // the seq a client holds after the last event sent (committed or not); null: no position yet
  sawTerminal = false; // the upstream's last event was RUN_FINISHED / RUN_ERROR (relay.js keeps it)
  plain; // started by a client that does not sequence (no position given): relay.js gives it AG-UI's interrupt boundary
  segment = 'unknown'; // its starting client's connection type (flaky-segments.js)
  lastStateType = null; // the type of the last state event sent
  #teardown = null; // aborts the upstream request and frees the relay
  #pendingPosition; // where the client said it was, until its catch-up is written
  #nextN = 1;
  #sentStarted = false;
  #stored; // StoredRunLog, or null: the log lives here only
  #queue = []; // with a stored log: entries to commit, and what waits for them (functions)
  #draining = false;
  #activityStream = null; // which of the thread's activities the run's client holds a position for

  constructor({ position, plain = false, stored = null, ...rest }) {
    super(rest);
    this.plain = plain;
    this.#pendingPosition = position;
    this.#stored = stored;
    stored?.start(this);
  }

  /** How to stop the upstream side when the run is aborted. */
  bindUpstream(teardown) {
    this.#teardown = teardown;
  }

  get started() {
    return this.ended || (this.startedN > 0 && this.#pendingPosition === undefined);
  }

  /** The run's stream of its thread's activities (created on first use, freed when the run finishes). */
  get activityStream() {
    if (this.finished) return undefined;
    this.#activityStream ??= this.thread.activityStream();
    return this.#activityStream;
  }

  /** The stream for a catch-up: none while the thread has no activities (nothing to hold a position for). */
  get catchUpStream() {
    return this.finished || !this.thread.hasActivities ? undefined : this.activityStream;
  }

  /**
   * Frames `event` with the next id and commits it (then every attached client
   * gets it). isState: a state event the proxy stamped (the stream's seq
   * moves); sequenced: one of the proxy's sequenced events, the state's or an
   * activity's (a resume that is caught up sends its catch-up instead).
   * Returns the framed text's length (0: not sent, the run is over).
   */
  send(event, isState = false, sequenced = isState) {
    if (this.finished) return 0;
    if (isState) {
      this.seq = wireSeq(event);
      this.lastStateType = event.type;
    }
    const n = this.#nextN++;
    const text = frameEvent(formatEventId(this.key, n), JSON.stringify(event));
    const first = event.type === 'RUN_STARTED' && !this.#sentStarted;
    if (first) this.#sentStarted = true;
    this.#commit(new LogEntry(n, text, this.seq, sequenced, TERMINAL_TYPES.has(event.type), first));
    return text.length;
  }

  /**
   * The catch-up for the position the run's first client started from,
   * written once, when the upstream's first event arrives (after its
   * RUN_STARTED: AG-UI clients require that first). No state while the thread
   * has no vouched state: the run's first state event is then a snapshot (its
   * activities, docs/wire.md section 11, are caught up either way).
   */
  writeCatchUp() {
    const position = this.#pendingPosition;
    if (position === undefined) return;
    this.#pendingPosition = undefined;
    const vouched = this.thread.vouched;
    return after(this.thread.catchUpEvents(position, this.catchUpStream), (events) => { // a Promise for a store-bound thread
      this.hooks.caughtUp?.(this, position, events);
      for (const event of events) this.send(event, isStateEvent(event), true);
      if (!vouched) return this.#afterCommitted(() => this.flushWaiting());
      // Where the catch-up left the client (a store-bound emitter may have moved on meanwhile).
      const states = events.filter(isStateEvent);
      this.seq = this.thread.durable ? (wireSeq(states.at(-1)) ?? position.lastSeq) : this.thread.emitter.seq;
      const seq = this.seq;
      // A heartbeat right after a catch-up: a client that was current (an empty
      // catch-up) learns it at once, not at the next periodic one; a restored
      // client's 'restored' resync ends there (nothing was missed).
      this.#afterCommitted(() => {
        this.writeAll(heartbeatLine(seq));
        this.flushWaiting();
      });
    });
  }

  /**
   * A client resumed before the upstream's RUN_STARTED: its catch-up must still
   * follow that event, so it replaces the pending one (the same client retrying,
   * or one that now stands where the run's first client stood).
   */
  deferCatchUp(position) {
    this.#pendingPosition = position;
  }

  /** A resumed client was caught up on its own: the run's pending catch-up is moot. */
  skipCatchUp() {
    if (this.#pendingPosition === undefined) return;
    this.#pendingPosition = undefined;
    if (this.thread.vouched) this.seq = this.thread.emitter.seq;
    this.flushWaiting();
  }

  /**
   * Aborts the run: the upstream request is cancelled and the stream ends
   * with a RUN_ERROR. reason: 'client' (X-AGUI-Abort), 'abandoned' (grace
   * period over), 'closed' (the proxy shuts down). False if already finished.
   */
  abort(reason) {
    if (this.finished) return false;
    const why = {
      client: 'the run was aborted by the client',
      abandoned: `no client reconnected within ${this.config.graceMs} ms`,
      closed: 'the proxy is shutting down',
    }[reason];
    this.#stopUpstream();
    this.finish(runError('run-aborted', why));
    return true;
  }

  /** The upstream run is over: `terminal` (a RUN_ERROR, or null) ends the stream once it is committed. */
  finish(terminal) {
    if (this.finished) return;
    if (terminal) this.send(terminal);
    this.finished = true;
    this.#teardown = null;
    this.#activityStream?.dispose();
    this.stopGrace();
    this.#stored?.stop();
    this.#afterCommitted(() => this.#end());
  }

  /**
   * The stored log is lost to this instance (its lease expired, another
   * instance declared the run lost, or the store could not be written in
   * time): the upstream run is stopped and the stream ends with `terminal`,
   * the run-lost RUN_ERROR as the store holds it when it could be read.
   * Nothing that was not committed is sent.
   */
  lose(terminalEntries) {
    this.#stopUpstream();
    this.finished = true;
    this.#activityStream?.dispose();
    this.#queue.length = 0;
    this.#stored?.stop();
    for (const entry of terminalEntries) this.publish(entry);
    this.#end();
  }

  // Grace over with no client here: another instance may still serve clients of it.
  graceOver() {
    const abandon = () => {
      if (this.abort('abandoned')) this.hooks.counters.aborts.abandoned++;
    };
    if (this.#stored === null) return abandon();
    this.#stored.present().then((present) => {
      if (!present || this.finished) return abandon();
      this.hooks.counters.graceKept++;
      return this.startGrace();
    }, abandon);
  }

  #end() {
    if (this.ended) return;
    this.endStream();
    this.hooks.finished(this);
  }

  #stopUpstream() {
    const teardown = this.#teardown;
    this.#teardown = null;
    if (teardown) teardown();
  }

  #commit(entry) {
    if (this.#stored === null) return this.publish(entry);
    this.#queue.push(entry);
    this.#drain();
  }

  // fn() once everything sent so far is committed and published.
  #afterCommitted(fn) {
    if (this.#stored === null || (this.#queue.length === 0 && !this.#draining)) return fn();
    this.#queue.push(fn);
    this.#drain();
  }

  // Commits the queued entries in order, a batch per store write, publishing
  // each batch once it landed and running what waited for it.
  async #drain() {
    if (this.#draining) return;
    this.#draining = true;
    try {
      while (this.#queue.length > 0) {
        if (typeof this.#queue[0] === 'function') {
          const fn = this.#queue.shift();
          try {
            fn();
          } catch (error) {
            this.hooks.report?.(error);
          }
          continue;
        }
        const end = this.#queue.findIndex((item) => typeof item === 'function');
        const batch = this.#queue.splice(0, end === -1 ? this.#queue.length : end);
        if (!(await this.#stored.append(batch))) return; // lost: lose() ended the run
        if (this.ended) return;
        for (const entry of batch) this.publish(entry);
      }
    } finally {
      this.#draining = false;
    }
  }
}
