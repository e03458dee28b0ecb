// Everything the proxy holds, and its bounds: threads (at most maxThreads,
// forgotten after threadIdleMs without a run, least recently used first when
// full), runs (at most maxRuns, live or finished and kept graceMs for late
// resumes), and the bytes of their event logs (maxRunBufferBytes per run,
// maxBufferedBytes in all: finished runs are dropped first, then the growing
// run's oldest events). Keys of dropped runs are remembered (a bounded list)
// so that a late resume is told the run is gone rather than started again.
import { createHash } from 'node:crypto';
import { syncError } from '../engine/errors.js';
import { Thread } from './thread.js';

const TOMBSTONE_FACTOR = 4;

export class Registry {
  #config;
  #threads = new Map(); // threadId -> Thread, least recently used first
  #creating = new Map(); // threadId -> { waiters, promise } of a thread being created
  #runs = new Map(); // stream key -> Run, oldest first
  #gone = new Map(); // stream key -> runId of a dropped run
  #timers = new Set(); // keep-for-resume timers of finished runs
  #draining = false; // drain(): no new runs
  #idleWaiters = new Set(); // drain() promises waiting for the last live run
  #sweepTimer;
  #closed = false;
  #forwarding = 0; // runs forwarded whose upstream has not answered yet
  bufferedBytes = 0;
  counters;

  constructor(config, counters) {
    this.#config = config;
    this.counters = counters;
    this.#sweepTimer = setInterval(() => this.sweep(Date.now()), Math.min(config.threadIdleMs, 60000));
    this.#sweepTimer.unref();
  }

  get threadCount() {
    return this.#threads.size;
  }

  get runCount() {
    return this.#runs.size;
  }

  get liveRunCount() {
    let live = this.#forwarding; // runs waiting for the upstream's answer hold a drain too
    for (const run of this.#runs.values()) if (!run.finished && !run.remote) live++; // another instance's run does not hold a drain
    return live;
  }

  /**
   * The thread `threadId` (created on first use), pinned: the caller unpins it
   * (thread.pins--) once its run is registered, so it cannot be evicted in
   * between. Throws a 503 refusal when all maxThreads threads are busy.
   */
  thread(threadId) {
    const known = this.#threads.get(threadId);
    if (known) {
      this.#threads.delete(threadId); // most recently used goes last
      this.#threads.set(threadId, known);
      known.pins++;
      known.lastActive = Date.now();
      return Promise.resolve(known);
    }
    let entry = this.#creating.get(threadId);
    if (!entry) {
      this.#makeRoomForThread();
      entry = { waiters: 0, promise: null };
      entry.promise = Thread.create(threadId, this.#config.emitter, this.#config.store, upstreamId(this.#config.upstream)).then(
        (thread) => this.#created(threadId, thread, entry.waiters),
        (error) => {
          this.#creating.delete(threadId);
          throw error;
        },
      );
      this.#creating.set(threadId, entry);
    }
    entry.waiters++; // each waiter gets its pin when the thread exists
    return entry.promise;
  }

  #created(threadId, thread, waiters) {
    this.#creating.delete(threadId);
    if (this.#closed) {
      thread.dispose();
      throw syncError('disposed', 'the proxy is closed', { status: 503 });
    }
    thread.pins += waiters;
    this.#threads.set(threadId, thread);
    return thread;
  }

  #makeRoomForThread() {
    if (this.#threads.size + this.#creating.size < this.#config.maxThreads) return;
    for (const thread of this.#threads.values()) {
      if (thread.idle) return this.#dropThread(thread);
    }
    throw syncError('limit-exceeded', `the proxy holds ${this.#config.maxThreads} threads with runs (maxThreads)`, { status: 503 });
  }

  #dropThread(thread) {
    this.#threads.delete(thread.id);
    thread.dispose();
  }

  /**
   * Stops taking new runs (503, while resumes of held runs are still served)
   * and resolves once no run is live: a SIGTERM lets running runs end.
   */
  drain() {
    this.#draining = true;
    return new Promise((resolve) => {
      this.#idleWaiters.add(resolve);
      this.#notifyIdle();
    });
  }

  get draining() {
    return this.#draining;
  }

  #notifyIdle() {
    if (this.#idleWaiters.size === 0 || this.liveRunCount > 0) return;
    for (const resolve of this.#idleWaiters) resolve();
    this.#idleWaiters.clear();
  }

  /** Registers a new run. Throws a 503 refusal when maxRuns runs are all live. */
  /** A run is forwarded: until the returned done() (once its upstream answered), it counts as live. */
  forwarding() {
    this.#forwarding++;
    let once = false;
    return () => {
      if (once) return;
      once = true;
      this.#forwarding--;
      this.#notifyIdle();
    };
  }

  addRun(run) {
    if (this.#runs.size >= this.#config.maxRuns) {
      const oldestFinished = [...this.#runs.values()].find((r) => r.finished);
      if (!oldestFinished) {
        throw syncError('limit-exceeded', `the proxy has ${this.#config.maxRuns} live runs (maxRuns)`, { status: 503 });
      }
      this.removeRun(oldestFinished);
    }
    this.#runs.set(run.key, run);
    run.thread.runs.add(run);
  }

  /** The run whose stream key is `key`: { run } if held, { gone: runId } if dropped, else null. */
  lookup(key) {
    const run = this.#runs.get(key);
    if (run) return { run };
    return this.#gone.has(key) ? { gone: this.#gone.get(key) } : null;
  }

  /** Live runs with this runId (and threadId, when given). */
  liveRuns(runId, threadId) {
    const found = [];
    for (const run of this.#runs.values()) {
      if (!run.finished && run.runId === runId && (threadId === undefined || run.thread.id === threadId)) found.push(run);
    }
    return found;
  }

  /** A run's log grew by `bytes` (the core keeps each within maxRunBufferBytes): enforce the total budget. */
  charge(run, bytes) {
    this.bufferedBytes += bytes;
    if (this.bufferedBytes <= this.#config.maxBufferedBytes) return;
    // Over the total: finished runs go first (oldest first; deleting while iterating a Map is safe) ...
    for (const other of this.#runs.values()) {
      if (this.bufferedBytes <= this.#config.maxBufferedBytes) return;
      if (other.finished) this.removeRun(other);
    }
    // ... then the oldest events of the run that grows.
    const over = this.bufferedBytes - this.#config.maxBufferedBytes;
    if (over > 0) this.bufferedBytes -= run.trimLog(Math.max(0, run.logBytes - over));
  }

  /** A run finished: it stays resumable for graceMs, then goes. */
  finished(run) {
    if (this.#closed) return;
    this.#notifyIdle();
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.removeRun(run);
    }, this.#config.graceMs);
    timer.unref();
    this.#timers.add(timer);
  }

  removeRun(run) {
    if (this.#runs.get(run.key) !== run) return;
    this.#runs.delete(run.key);
    run.thread.runs.delete(run);
    run.thread.lastActive = Date.now();
    this.bufferedBytes -= run.clearLog();
    run.dispose();
    if (run.remote) return; // a copy of another instance's run: the store still answers for it
    this.#gone.set(run.key, run.runId);
    if (this.#gone.size > this.#config.maxRuns * TOMBSTONE_FACTOR) this.#gone.delete(this.#gone.keys().next().value);
  }

  /** Forgets threads without runs that were idle for threadIdleMs. */
  sweep(now) {
    for (const thread of [...this.#threads.values()]) {
      if (thread.idle && now - thread.lastActive >= this.#config.threadIdleMs) this.#dropThread(thread);
    }
  }

  /** Aborts every live run and frees everything. */
  close() {
    this.#closed = true;
    clearInterval(this.#sweepTimer);
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const run of [...this.#runs.values()]) {
      run.abort('closed');
      this.removeRun(run);
    }
    for (const thread of [...this.#threads.values()]) this.#dropThread(thread);
    this.#notifyIdle();
  }
}

// Which upstream a proxy runs, as the store names what it kept of it: its URL's digest
// (a fixed length, whatever the URL; no credentials in a URL reach a store key).
function upstreamId(url) {
  return createHash('sha256').update(String(url?.href ?? url)).digest('hex').slice(0, 16);
}

