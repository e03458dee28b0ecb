// What every run the proxy serves has, whoever holds its upstream: its log of
// id-stamped events as committed (event-log.js), and the client connections
// attached to it, which get every committed event, a heartbeat every
// heartbeatMs, and the end of the stream. A connection that breaks is not an
// abort: when the last one is gone, graceMs later graceOver() decides. Two
// kinds: Run (run.js: this instance holds the upstream connection) and
// RemoteRun (remote-run.js: another instance does; this one tails the run's
// log in the store).
import { EventLog } from './event-log.js';
import { heartbeatLine } from './sse-out.js';

export class RunStream {
  key; // the stream key in every event id
  runId;
  thread;
  fingerprint; // of the credentials that started it (an abort must match)
  log = new EventLog();
  finished = false; // no event will be added
  ended = false; // ...and the last one was written: connections are ended
  /** Number of the logged event that started the run (its first RUN_STARTED; 0: not yet), and its framed text. */
  startedN = 0;
  startedText = '';
  sentSeq = null; // the seq a client holds after the last event written to clients
  config;
  hooks; // registry: charge(run, bytes), finished(run); counters
  #clients = new Set(); // attached connections: { res, timer }
  #waiting = []; // attaches that wait for the run to have started (whenStarted)
  #graceTimer = null;

  constructor({ key, runId, thread, fingerprint, config, hooks }) {
    this.key = key;
    this.runId = runId;
    this.thread = thread;
    this.fingerprint = fingerprint;
    this.config = config;
    this.hooks = hooks;
  }

  /** A committed event: logged, then written to every attached connection. */
  publish(entry) {
    if (entry.started && this.startedN === 0) {
      this.startedN = entry.n;
      this.startedText = entry.text; // kept when the log is trimmed: every attach begins with it
    }
    this.log.append(entry);
    this.hooks.charge(this, entry.bytes);
    this.sentSeq = entry.seq;
    for (const conn of this.#clients) this.write(conn, entry.text, entry.bytes);
  }

  /** True once another client can attach: the run has sent its RUN_STARTED (or is over). */
  get started() {
    return this.ended || this.startedN > 0;
  }

  /**
   * Calls fn() once the run has started (see `started`): what another client
   * attaches to. Before that, an attaching client's own catch-up could not
   * follow RUN_STARTED.
   */
  whenStarted(fn) {
    if (this.started) fn();
    else this.#waiting.push(fn);
  }

  flushWaiting() {
    if (!this.started) return;
    for (const fn of this.#waiting.splice(0)) fn();
  }

  /** A resume before RUN_STARTED (resume.js): the run's own business (Run); nothing for others. */
  deferCatchUp() {}

  /** A resumed client was caught up on its own (resume.js). */
  skipCatchUp() {}

  /**
   * Attaches a client connection (a new run's, or a resume's or an attach's
   * after `preamble`, the text that brings it up to date), next to any
   * attached one. An ended run's connection is ended after the preamble.
   */
  attach(res, preamble) {
    this.stopGrace();
    const conn = { res, timer: null };
    if (preamble) this.write(conn, preamble);
    if (preamble !== undefined && this.started) this.write(conn, heartbeatLine(this.sentSeq));
    if (this.ended) {
      res.end();
      return;
    }
    if (res.destroyed) {
      if (this.#clients.size === 0) this.startGrace(); // the client left before its stream started
      return;
    }
    this.#clients.add(conn);
    conn.timer = setInterval(() => this.write(conn, heartbeatLine(this.sentSeq)), this.config.heartbeatMs);
    conn.timer.unref();
    res.on('close', () => this.#detach(conn));
  }

  /** Every attached connection gets `text` (a heartbeat). */
  writeAll(text) {
    for (const conn of this.#clients) this.write(conn, text);
  }

  /** The stream is over: every connection is ended, waiting attaches are served (they end too). */
  endStream() {
    this.finished = true;
    this.ended = true;
    this.stopGrace();
    for (const conn of this.#clients) this.#release(conn, true);
    this.flushWaiting();
  }

  write(conn, text, bytes = Buffer.byteLength(text)) {
    const { res } = conn;
    if (res.destroyed || res.writableEnded) return;
    res.write(text);
    this.hooks.counters.clientBytes += bytes;
    // A client that does not read keeps bytes queued here: cut it (it resumes from its last id).
    if (res.writableLength > this.config.maxClientQueueBytes) {
      this.hooks.counters.slowClientsCut++;
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
    if (wasAttached && this.#clients.size === 0 && !this.finished) this.startGrace();
  }

  startGrace() {
    clearTimeout(this.#graceTimer);
    this.#graceTimer = setTimeout(() => {
      this.#graceTimer = null;
      if (this.#clients.size === 0 && !this.finished) this.graceOver();
    }, this.config.graceMs);
    this.#graceTimer.unref();
  }

  stopGrace() {
    clearTimeout(this.#graceTimer);
    this.#graceTimer = null;
  }

  /** No client came back within graceMs: the kind of run decides (abort, or forget the copy). */
  graceOver() {}
}
