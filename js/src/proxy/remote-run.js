// A run another instance holds (its upstream connection is there), served
// here from its log in the store (run-store.js): a client that resumed or
// attached on this instance gets the same events, byte for byte, as the
// holder's clients. The copy here follows the stored log: read whole when a
// client first asks for the run, then tailed, on every notification of a
// write (store.watch, as the thread fan-out is) and every leaseMs / 2 as a
// safety net, which also checks the holder's lease: a live run whose lease
// expired (the holder died) is ended in the store with the run-lost
// RUN_ERROR (by whichever instance gets there first), and that event reaches
// every client like any other. While this instance serves clients of the run
// it says so in the store (every graceMs / 3, for graceMs), so the holder's
// grace period waits for them. With
// no client for graceMs the copy is dropped (the run goes on at its holder).
import { LogEntry } from './event-log.js';
import { RunStream } from './run-stream.js';

function logEntry(stored) {
  return new LogEntry(stored.n, stored.text, stored.seq, stored.state, stored.terminal, stored.started);
}

export class RemoteRun extends RunStream {
  remote = true;
  #store; // RunStore
  #leaseMs;
  #unwatch = null;
  #timer = null;
  #presence = null; // says so in the store every graceMs / 3 while clients are attached here
  #pulling = null; // the read under way
  #again = false; // a notification came during it: read once more

  /** A copy of the run `stored` ({ meta, leased, entries }: RunStore.read(key, 0)) on `thread`. */
  constructor({ store, stored, thread, config, hooks }) {
    const { meta } = stored;
    super({ key: meta.key, runId: meta.runId, thread, fingerprint: meta.fingerprint, config, hooks });
    this.#store = store;
    this.#leaseMs = config.runLeaseMs;
    const first = stored.entries[0];
    if (first !== undefined && first.n > 1) this.log.startAfter(first.n - 1, meta.trimmedSeq);
    if (meta.startedN > 0 && (first === undefined || first.n > meta.startedN)) {
      this.startedN = meta.startedN; // the RUN_STARTED was trimmed from the stored log: its text is kept in meta
      this.startedText = meta.startedText;
    }
    this.sentSeq = meta.lastN > 0 && stored.entries.length === 0 ? meta.seq : null;
    this.#ingest(stored.entries);
  }

  /** Starts following the stored log (unless the copy is complete already). */
  follow() {
    if (this.ended) return;
    this.#unwatch = this.#store.watch(this.key, () => this.#pull());
    this.#timer = setInterval(() => this.#pull(true), Math.max(1, Math.floor(this.#leaseMs / 2)));
    this.#timer.unref();
    this.#presence = setInterval(() => this.#markPresent(), Math.max(1, Math.floor(this.config.graceMs / 3)));
    this.#presence.unref();
  }

  attach(res, preamble) {
    super.attach(res, preamble);
    this.#markPresent();
  }

  /**
   * An abort asked here ('client': X-AGUI-Abort with the starter's
   * credentials, checked by the caller) is asked of the holder through the
   * store; 'closed' (this proxy shuts down) only ends the copy's connections,
   * without an event: the run goes on, its clients resume elsewhere.
   */
  abort(reason) {
    if (this.finished) return false;
    if (reason === 'client') {
      this.#store.requestAbort(this.key, this.fingerprint).catch((error) => this.hooks.report?.(error));
      return true;
    }
    this.#stop();
    this.endStream();
    return true;
  }

  graceOver() {
    this.#stop();
    this.hooks.forget(this);
  }

  // Reads what the stored log holds after this copy's last event; `check`: also
  // end a live run whose holder's lease expired.
  #pull(check = false) {
    if (this.#timer === null) return;
    if (this.#pulling) {
      this.#again = true;
      return;
    }
    this.#pulling = this.#read(check).catch((error) => this.hooks.report?.(error)).finally(() => {
      this.#pulling = null;
      if (!this.#again) return;
      this.#again = false;
      this.#pull();
    });
  }

  async #read(check) {
    const stored = await this.#store.read(this.key, this.log.lastN);
    if (stored === null || this.#timer === null) return;
    this.#ingest(stored.entries);
    if (!check || stored.meta.status !== 'live' || stored.leased) return;
    if (await this.#store.lose(this.key)) this.hooks.counters.runsLost++;
    this.#again = true; // read the run-lost event
  }

  #ingest(entries) {
    for (const stored of entries) {
      if (this.ended || stored.n !== this.log.lastN + 1) continue;
      this.publish(logEntry(stored));
      if (!stored.terminal) continue;
      this.#stop();
      this.endStream();
      this.hooks.finished(this);
    }
    if (!this.ended) this.flushWaiting();
  }

  #markPresent() {
    if (this.ended || this.clientCount === 0) return;
    this.#store.markPresent(this.key, this.config.graceMs).catch(() => {});
  }

  #stop() {
    this.#unwatch?.();
    this.#unwatch = null;
    clearInterval(this.#timer);
    this.#timer = null;
    clearInterval(this.#presence);
    this.#presence = null;
  }
}
