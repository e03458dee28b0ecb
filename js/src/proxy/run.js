// One upstream run as its clients see it: a stream of id-stamped events,
// logged (event-log.js) so that a client whose connection broke can resume it
// with Last-Event-ID. Every attached connection gets every event: the run's
// starter, its resumes, and clients that attached to the thread's running run
// (a reloaded page, a second device: X-AGUI-Attach). A connection that breaks
// is not an abort: the upstream run keeps going while any connection is
// attached and for graceMs after the last one went, and is aborted only by an
// explicit abort or when nobody came back in time.
import { LogEntry, EventLog } from './event-log.js';
import { runError, TERMINAL_TYPES } from './events.js';
import { formatEventId, frameEvent, heartbeatLine } from './sse-out.js';
import { after } from '../server/emitter-writes.js';
import { wireSeq } from '../engine/wire-meta.js';

export class Run {
  key; // the stream key in every event id
  runId;
  thread;
  fingerprint; // of the credentials that started it (an abort must match)
  log = new EventLog();
  seq = null; // the seq a client holds after the last event sent; null: no position yet
  finished = false;
  sawTerminal = false; // the upstream's last event was RUN_FINISHED / RUN_ERROR (relay.js keeps it)
  plain; // started by a client that does not sequence (no position given): relay.js gives it AG-UI's interrupt boundary
  lastStateType = null; // the type of the last state event sent
  #config;
  #hooks; // registry: charge(run, bytes), finished(run); counters
  #clients = new Set(); // attached connections: { res, timer }
  #waiting = []; // attaches that wait for the run's RUN_STARTED and its first catch-up (whenStarted)
  #graceTimer = null;
  #teardown = null; // aborts the upstream request and frees the relay
  #pendingPosition; // where the client said it was, until its catch-up is written

  constructor({ key, runId, thread, fingerprint, position, plain = false, config, hooks }) {
    this.key = key;
    this.plain = plain;
    this.runId = runId;
    this.thread = thread;
    this.fingerprint = fingerprint;
    this.#pendingPosition = position;
    this.#config = config;
    this.#hooks = hooks;
  }

  /** How to stop the upstream side when the run is aborted. */
  bindUpstream(teardown) {
    this.#teardown = teardown;
  }

  /** Number of the logged event that started the run (its first RUN_STARTED; 0: not yet), and its framed text. */
  startedN = 0;
  startedText = '';

  /** Frames `event` with the next id, logs it, and writes it to the attached client. */
  send(event, isState = false) {
    if (this.finished) return;
    if (isState) {
      this.seq = wireSeq(event);
      this.lastStateType = event.type;
    }
    const n = this.log.lastN + 1;
    const text = frameEvent(formatEventId(this.key, n), JSON.stringify(event));
    if (event.type === 'RUN_STARTED' && this.startedN === 0) {
      this.startedN = n;
      this.startedText = text; // kept when the log is trimmed: every attach begins with it
    }
    const entry = new LogEntry(n, text, this.seq, isState, TERMINAL_TYPES.has(event.type));
    this.log.append(entry);
    this.#hooks.charge(this, entry.bytes);
    for (const conn of this.#clients) this.#write(conn, entry.text, entry.bytes);
  }

  /**
   * Calls fn() once the run has sent its RUN_STARTED and the catch-up of the
   * client that started it (or once it is over): what another client attaches
   * to. Before that, an attaching client's own catch-up could not follow
   * RUN_STARTED, and the starter's would not fit it.
   */
  whenStarted(fn) {
    if (this.#started) fn();
    else this.#waiting.push(fn);
  }

  get #started() {
    return this.finished || (this.startedN > 0 && this.#pendingPosition === undefined);
  }

  #flushWaiting() {
    if (!this.#started) return;
    for (const fn of this.#waiting.splice(0)) fn();
  }

  /**
   * The catch-up for the position the run's first client started from,
   * written once, when the upstream's first event arrives (after its
   * RUN_STARTED: AG-UI clients require that first). Nothing while the thread
   * has no vouched state: the run's first state event is then a snapshot.
   */
  writeCatchUp() {
    const position = this.#pendingPosition;
    if (position === undefined) return;
    this.#pendingPosition = undefined;
    if (!this.thread.vouched) return this.#flushWaiting();
    return after(this.thread.catchUpEvents(position), (events) => { // a Promise for a store-bound thread
      for (const event of events) this.send(event, true);
      // Where the catch-up left the client (a store-bound emitter may have moved on meanwhile).
      this.seq = this.thread.durable ? (wireSeq(events.at(-1)) ?? position.lastSeq) : this.thread.emitter.seq;
      this.#confirmPosition();
      this.#flushWaiting();
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
    if (this.#pendingPosition === undefined || !this.thread.vouched) return;
    this.#pendingPosition = undefined;
    this.seq = this.thread.emitter.seq;
    this.#flushWaiting();
  }

  /**
   * Attaches a client connection (a new run's, or a resume's or an attach's
   * after `preamble`, the text that brings it up to date), next to any
   * attached one. A finished run's connection is ended after the preamble.
   */
  attach(res, preamble) {
    clearTimeout(this.#graceTimer);
    this.#graceTimer = null;
    const conn = { res, timer: null };
    if (preamble) this.#write(conn, preamble);
    if (preamble !== undefined && this.startedN > 0 && this.#pendingPosition === undefined) this.#write(conn, heartbeatLine(this.seq));
    if (this.finished) {
      res.end();
      return;
    }
    if (res.destroyed) {
      if (this.#clients.size === 0) this.#startGrace(); // the client left before its stream started
      return;
    }
    this.#clients.add(conn);
    conn.timer = setInterval(() => this.#write(conn, heartbeatLine(this.seq)), this.#config.heartbeatMs);
    conn.timer.unref();
    res.on('close', () => this.#detach(conn));
  }

  /**
   * Aborts the run: the upstream request is cancelled and the stream ends
   * with a RUN_ERROR. reason: 'client' (X-AGUI-Abort), 'abandoned' (grace
   * period over), 'closed' (the proxy shuts down). False if already finished.
   */
  abort(reason) {
    if (this.finished) return false;
    const teardown = this.#teardown;
    this.#teardown = null;
    if (teardown) teardown();
    const why = {
      client: 'the run was aborted by the client',
      abandoned: `no client reconnected within ${this.#config.graceMs} ms`,
      closed: 'the proxy is shutting down',
    }[reason];
    this.finish(runError('run-aborted', why));
    return true;
  }

  /** The upstream run is over: `terminal` (a RUN_ERROR, or null) ends the stream. */
  finish(terminal) {
    if (this.finished) return;
    if (terminal) this.send(terminal);
    this.finished = true;
    this.#teardown = null;
    clearTimeout(this.#graceTimer);
    this.#graceTimer = null;
    for (const conn of this.#clients) this.#release(conn, true);
    this.#hooks.finished(this);
    this.#flushWaiting();
  }

  // A heartbeat right after a catch-up: a client that was current (an empty
  // catch-up) learns it at once, not at the next periodic one; a restored
  // client's 'restored' resync ends there (nothing was missed).
  #confirmPosition() {
    for (const conn of this.#clients) this.#write(conn, heartbeatLine(this.seq));
  }

  #write(conn, text, bytes = Buffer.byteLength(text)) {
    const { res } = conn;
    if (res.destroyed || res.writableEnded) return;
    res.write(text);
    this.#hooks.counters.clientBytes += bytes;
    // A client that does not read keeps bytes queued here: cut it (it resumes from its last id).
    if (res.writableLength > this.#config.maxClientQueueBytes) {
      this.#hooks.counters.slowClientsCut++;
      res.destroy();
    }
  }

  /** Connections attached now. */
  get clientCount() {
    return this.#clients.size;
  }

  // Stops a connection's heartbeat; `end`: also end its response (the run is over).
  #release(conn, end) {
    clearInterval(conn.timer);
    this.#clients.delete(conn);
    if (end && !conn.res.writableEnded) conn.res.end();
  }

  // A client's connection closed: once none is left and the run is not over, the grace period starts.
  #detach(conn) {
    const wasAttached = this.#clients.has(conn);
    this.#release(conn, false);
    if (wasAttached && this.#clients.size === 0 && !this.finished) this.#startGrace();
  }

  #startGrace() {
    clearTimeout(this.#graceTimer);
    this.#graceTimer = setTimeout(() => {
      this.#graceTimer = null;
      if (this.abort('abandoned')) this.#hooks.counters.aborts.abandoned++;
    }, this.#config.graceMs);
    this.#graceTimer.unref();
  }
}
