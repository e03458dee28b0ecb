// One upstream run this instance holds, as its clients see it (run-stream.js:
// the core's run machine and the attached connections): the events it sends
// are numbered, framed and committed by the core, then published. Committed
// means logged, or, with a stored log (stored-run-log.js: the proxy's Redis
// store), appended to the run's log in Redis first: nothing reaches a client
// that another instance could not serve too. The core decides when the run is
// abandoned (no client here, nor, with a stored log, at another instance,
// within graceMs) and that a lost lease ends it as 'run-lost'; this driver
// stops the upstream and writes to the store when it says so.
import { RunStream } from './run-stream.js';
import { heartbeatLine } from './sse-out.js';
import { after } from '../server/emitter-writes.js';
import { wireSeq } from '../engine/wire-meta.js';

const isStateEvent = (event) => event.type === 'STATE_SNAPSHOT' || event.type === 'STATE_DELTA';

export class Run extends RunStream {
  seq = null; // the seq a client holds after the last event sent (committed or not); null: no position yet
  plain; // started by a client that does not sequence (no position given): relay.js gives it AG-UI's interrupt boundary
  segment = 'unknown'; // its starting client's connection type (flaky-segments.js)
  lastStateType = null; // the type of the last state event sent
  #teardown = null; // aborts the upstream request and frees the relay
  #pendingPosition; // where the client said it was, until its catch-up is written
  #stored; // StoredRunLog, or null: the log lives here only
  #activityStream = null; // which of the thread's activities the run's client holds a position for
  #committing = []; // with a stored log: what waits for everything sent so far to be published

  constructor({ position, plain = false, stored = null, ...rest }) {
    super({ ...rest, stored: stored !== null });
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
   * Sends `event`: the core numbers, frames and commits it (then every
   * attached client gets it). isState: a state event the proxy stamped (the
   * stream's seq moves). Returns the framed text's length (0: not sent, the
   * run is over).
   */
  send(event, isState = false) {
    if (this.finished) return 0;
    if (isState) {
      this.seq = wireSeq(event);
      this.lastStateType = event.type;
    }
    const json = JSON.stringify(event);
    this.carry(this.life.event(json));
    // The framed text's length: "id: <key>:<n>\ndata: <json>\n\n" (sse-out.js).
    return 4 + this.key.length + 1 + String(this.life.at.framedN).length + 7 + json.length + 2;
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
      for (const event of events) this.send(event, isStateEvent(event));
      if (!vouched) return this.#afterCommitted(() => this.flushWaiting());
      // Where the catch-up left the client (a store-bound emitter may have moved on meanwhile).
      const states = events.filter(isStateEvent);
      this.seq = this.thread.durable ? (wireSeq(states.at(-1)) ?? position.lastSeq) : this.thread.emitter.seq;
      const seq = this.seq;
      this.life.step({ on: 'position', seq });
      // A heartbeat right after a catch-up: a client that was current (an empty
      // catch-up) learns it at once, not at the next periodic one; a restored
      // client's 'restored' resync ends there (nothing was missed).
      this.#afterCommitted(() => {
        this.writeAll(heartbeatLine(seq));
        this.flushWaiting();
      });
    });
  }

  /** A client resumed before the upstream's RUN_STARTED: its catch-up replaces the pending one. */
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
   * with a RUN_ERROR. reason: 'client' (X-AGUI-Abort, the starter's
   * credentials checked), 'closed' (the proxy shuts down). False if already finished.
   */
  abort(reason) {
    if (this.finished) return false;
    this.carry(this.life.step({ on: 'abort', reason, requester: this.fingerprint }));
    return this.finished;
  }

  /**
   * The upstream run is over. failure: why it failed ({ code, message }), or
   * null: the core ends the stream (with RUN_ERROR when the upstream did not).
   */
  finish(failure = null) {
    if (this.finished) return;
    this.carry(this.life.step({ on: 'ended', failure: failure?.message ?? null, code: failure?.code ?? 'upstream-failed' }));
  }

  /**
   * The stored log is lost to this instance (its lease expired, another
   * instance declared the run lost, or the store could not be written in
   * time): the stream ends with `tail`, the run-lost RUN_ERROR as the store
   * holds it ({ n, seq, flags, text }; the core writes its own without one).
   */
  lose(tail) {
    this.carry(this.life.step({ on: 'lost', entries: tail }));
  }

  act(action) {
    switch (action.do) {
      case 'append':
        return this.#append(action.entries);
      case 'stop-upstream':
        return this.#stopUpstream();
      case 'ask-present':
        return this.#askPresent();
      default:
        return super.act(action);
    }
  }

  graceOver(actions) {
    if (actions.some((a) => a.do === 'stop-upstream')) this.hooks.counters.aborts.abandoned++;
    super.graceOver(actions);
  }

  done() {
    this.#activityStream?.dispose();
    this.#stored?.stop();
    this.#teardown = null;
    const waiting = this.#committing.splice(0);
    super.done();
    for (const fn of waiting) fn();
    this.hooks.finished(this);
  }

  // Another instance may serve clients of this run: the core keeps the grace period going if so.
  #askPresent() {
    this.#stored.present().then((present) => {
      if (present) this.hooks.counters.graceKept++;
      return present;
    }, () => false).then((elsewhere) => {
      const actions = this.life.step({ on: 'present', elsewhere, now: Date.now() });
      if (actions.some((a) => a.do === 'stop-upstream')) this.hooks.counters.aborts.abandoned++;
      this.carry(actions);
    });
  }

  #stopUpstream() {
    const teardown = this.#teardown;
    this.#teardown = null;
    this.#stored?.stop();
    if (teardown) teardown();
  }

  // The store takes a batch: then it is published (committed), or the run is lost.
  #append(entries) {
    this.#stored.append(entries).then((ok) => {
      if (!ok) return; // lost: StoredRunLog ended the run with lose()
      this.carry(this.life.step({ on: 'committed', n: entries.at(-1).n }));
      if (this.#allCommitted()) for (const fn of this.#committing.splice(0)) fn();
    }, (error) => this.hooks.report?.(error));
  }

  #allCommitted() {
    return this.life.at.framedN === this.life.at.lastN;
  }

  // fn() once everything sent so far is committed and published.
  #afterCommitted(fn) {
    if (this.#stored === null || this.#allCommitted()) return fn();
    this.#committing.push(fn);
  }
}
