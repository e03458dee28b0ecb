// What every run the proxy serves has, whoever holds its upstream: the core's
// run machine (run-life.js: its log of id-stamped events, who gets what, the
// grace period), and the client connections attached to it, which get every
// committed event, a heartbeat every heartbeatMs, and the end of the stream.
// This is the machine's driver for the proxy: it carries out the actions each
// step returns (write to these connections, arm the timer, ...). A connection
// that breaks is not an abort: when the last one is gone the core arms the
// grace period, and decides when it is over. Two kinds: Run (run.js: this
// instance holds the upstream connection) and RemoteRun (remote-run.js:
// another instance does; this one tails the run's log in the store).
import { syncError } from '../engine/errors.js';
import { RunLife } from './run-life.js';
import { heartbeatLine } from './sse-out.js';

export class RunStream {
  key; // the stream key in every event id
  runId;
  thread;
  fingerprint; // the starter's requester digest (an abort must match)
  config;
  hooks; // registry: charge(run, bytes), finished(run), forget(run); counters
  life; // the core's run machine
  #conns = new Map(); // client id -> { id, res, timer, request, settle }
  #nextClient = 1;
  #waiting = []; // what waits for the run to have started (whenStarted)
  #graceTimer = null;
  #logBytes = 0;

  constructor({ key, runId, thread, fingerprint, config, hooks, stored = false, followed = false, keep = false }) {
    this.key = key;
    this.runId = runId;
    this.thread = thread;
    this.fingerprint = fingerprint;
    this.config = config;
    this.hooks = hooks;
    this.life = new RunLife({
      key, requester: fingerprint, stored, followed, keep, graceMs: config.graceMs, maxBytes: config.maxRunBufferBytes,
      maxEvents: config.maxRunEvents ?? 100000, maxClients: config.maxRunClients,
    });
  }

  get finished() {
    return this.life.at.finished;
  }

  get ended() {
    return this.life.at.ended;
  }

  /** Number of the logged event that started the run (its first RUN_STARTED; 0: not yet). */
  get startedN() {
    return this.life.at.startedN;
  }

  /** The seq a client holds after the last event written to clients. */
  get sentSeq() {
    return this.life.at.sentSeq;
  }

  /** Number of the last event logged (0: none yet). */
  get lastN() {
    return this.life.at.lastN;
  }

  /** Bytes of the events the run's log holds. */
  get logBytes() {
    return this.#logBytes;
  }

  /** True once another client can attach: the run has sent its RUN_STARTED (or is over). */
  get started() {
    return this.ended || this.startedN > 0;
  }

  /** Connections attached now. */
  get clientCount() {
    return this.life.at.clients;
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

  /** A resume before RUN_STARTED: the run's own business (Run); nothing for others. */
  deferCatchUp() {}

  /** A resumed client was caught up on its own. */
  skipCatchUp() {}

  /** The stream for a client's catch-up (Run: the thread's activities it holds a position for). */
  get catchUpStream() {
    return undefined;
  }

  /** The run's own first client: everything, live, from the start. */
  attachStarter(res) {
    const conn = this.#connect(res, { starter: true });
    if (conn) this.#startBeats(conn);
  }

  /**
   * A client joins (a resume after event afterN, or an attach): the core
   * decides its preamble, asking for its catch-up when it needs one. Resolves
   * with the mode once its head is written (onHead(mode) writes it), rejects
   * with the refusal (an id never sent, too many connections).
   */
  join(res, { afterN, attach, position }, onHead) {
    return new Promise((resolve, reject) => {
      const settle = { resolve, reject, onHead };
      // The core reads the position's lastSeq, epoch, reason and activities (readResyncRequest's).
      this.#connect(res, { afterN, attach, position: position ?? {} }, settle, position);
    });
  }

  #connect(res, request, settle = null, position = null) {
    const conn = { id: this.#nextClient++, res, timer: null, request, settle, position };
    this.#conns.set(conn.id, conn);
    res.on('close', () => this.#detach(conn));
    this.#join(conn);
    return this.#conns.get(conn.id) ?? null;
  }

  #join(conn, catchUp) {
    // Where the thread is now: an ended run's exact resume holds only if it is still where the run left it.
    const input = { on: 'join', client: conn.id, ...conn.request, epoch: this.thread.emitter?.epoch ?? null, seq: this.thread.emitter?.seq ?? null };
    if (catchUp !== undefined) input.catchUp = catchUp;
    this.carry(this.life.step(input));
  }

  /** Carries out the core's actions, in order. */
  carry(actions) {
    const bytes = this.life.at.logBytes;
    if (bytes !== this.#logBytes) {
      const grew = bytes - this.#logBytes;
      this.#logBytes = bytes;
      this.hooks.charge(this, grew);
    }
    for (const action of actions) this.act(action);
  }

  /** One action; the kinds of run add their own (Run: append, stop-upstream; RemoteRun: ask-abort). */
  act(action) {
    switch (action.do) {
      case 'send':
        for (const id of action.to) {
          const conn = this.#conns.get(id);
          if (conn) this.write(conn, action.text);
        }
        return;
      case 'head':
        return this.#head(action.to[0], action.mode);
      case 'close':
        for (const id of action.to) this.#release(this.#conns.get(id), true);
        return;
      case 'refuse':
        return this.#refuse(action);
      case 'catch-up':
        return this.#catchUp(this.#conns.get(action.to[0]));
      case 'rejoin':
        return this.#conns.has(action.to[0]) ? this.#join(this.#conns.get(action.to[0])) : undefined;
      case 'defer':
        return this.deferCatchUp(this.#conns.get(action.to[0])?.position);
      case 'arm':
        return this.#arm(action.at);
      case 'disarm':
        clearTimeout(this.#graceTimer);
        this.#graceTimer = null;
        return;
      case 'started':
        return this.flushWaiting();
      case 'done':
        return this.done();
      default:
        return undefined;
    }
  }

  #head(id, mode) {
    const conn = this.#conns.get(id);
    if (!conn?.settle) return;
    const { settle } = conn;
    conn.settle = null;
    try {
      settle.onHead(mode);
    } catch (error) {
      settle.reject(error);
      return;
    }
    this.#startBeats(conn);
    settle.resolve(mode);
  }

  #refuse({ to, status, code, message }) {
    const conn = this.#conns.get(to[0]);
    if (!conn) return;
    this.#conns.delete(conn.id);
    conn.settle?.reject(syncError(code, message, { status }));
  }

  // The thread's catch-up for this client, then its join again with it: in
  // one step, so that no event falls between the two.
  #catchUp(conn) {
    if (!conn) return;
    const fail = (error) => {
      this.#conns.delete(conn.id);
      conn.settle?.reject(error);
    };
    try {
      const pending = this.thread.withCatchUp((catchUpEvents) => {
        if (!this.#conns.has(conn.id)) return;
        const events = catchUpEvents(conn.position ?? {}, this.catchUpStream);
        this.hooks.caughtUp?.(this, conn.position, events);
        this.skipCatchUp();
        this.#join(conn, events.map((event) => JSON.stringify(event)));
      });
      if (typeof pending?.then === 'function') pending.catch(fail);
    } catch (error) {
      fail(error);
    }
  }

  #startBeats(conn) {
    if (this.ended || conn.res.destroyed) return;
    conn.timer = setInterval(() => this.write(conn, heartbeatLine(this.sentSeq)), this.config.heartbeatMs);
    conn.timer.unref();
  }

  #arm(at) {
    clearTimeout(this.#graceTimer);
    this.#graceTimer = setTimeout(() => {
      this.#graceTimer = null;
      this.graceOver(this.life.step({ on: 'timer', now: Date.now() }));
    }, Math.max(0, at - Date.now()));
    this.#graceTimer.unref();
  }

  /** The grace period's timer fired: the core's answer (Run and RemoteRun count what it decided). */
  graceOver(actions) {
    this.carry(actions);
  }

  /** Every attached connection gets `text` (a heartbeat). */
  writeAll(text) {
    for (const conn of this.#conns.values()) if (!conn.settle) this.write(conn, text);
  }

  write(conn, text) {
    const { res } = conn;
    if (res.destroyed || res.writableEnded) return;
    res.write(text);
    this.hooks.counters.clientBytes += Buffer.byteLength(text);
    // A client that does not read keeps bytes queued here: cut it (it resumes from its last id).
    if (res.writableLength > this.config.maxClientQueueBytes) {
      this.hooks.counters.slowClientsCut++;
      res.destroy();
    }
  }

  /** The run is over and delivered (or this copy dropped): the kinds of run say what follows. */
  done() {
    clearTimeout(this.#graceTimer);
    this.#graceTimer = null;
    // Connections still joining (their catch-up under way) join the ended run: its preamble, then the end.
    for (const conn of [...this.#conns.values()]) if (conn.settle === null) this.#release(conn, true);
    this.flushWaiting();
  }

  // Stops a connection's heartbeat; `end`: also end its response (the run is over).
  #release(conn, end) {
    if (!conn) return;
    clearInterval(conn.timer);
    this.#conns.delete(conn.id);
    if (end && !conn.res.writableEnded) conn.res.end();
  }

  // A client's connection closed: the core hears it left (its grace period may start).
  #detach(conn) {
    if (!this.#conns.has(conn.id)) return;
    clearInterval(conn.timer);
    this.#conns.delete(conn.id);
    if (this.ended) return;
    this.carry(this.life.step({ on: 'left', client: conn.id, now: Date.now() }));
  }

  /** Drops the log's oldest events down to `toBytes` (the newest stays): the bytes freed. */
  trimLog(toBytes) {
    const before = this.#logBytes;
    this.life.step({ on: 'trim', toBytes });
    this.#logBytes = this.life.at.logBytes;
    return before - this.#logBytes;
  }

  /** Drops the whole log (the run is forgotten): the bytes freed. */
  clearLog() {
    const before = this.#logBytes;
    this.life.step({ on: 'clear' });
    this.#logBytes = 0;
    return before;
  }

  /** Frees the core's machine (the run is forgotten). */
  dispose() {
    this.life.dispose();
  }
}
