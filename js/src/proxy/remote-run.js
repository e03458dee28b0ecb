// A run another instance holds (its upstream connection is there), served
// here from its log in the store (run-store.js): a client that resumed or
// attached on this instance gets the same events, byte for byte, as the
// holder's clients. The core's run machine follows the stored log ('followed':
// its entries arrive as read, seeded where the stored log starts); this
// driver reads it whole when a client first asks for the run, then tails it
// on every notification of a write (store.watch, as the thread fan-out is)
// and every leaseMs / 2 as a safety net, which also checks the holder's
// lease: a live run whose lease expired (the holder died) is ended in the
// store with the run-lost RUN_ERROR (by whichever instance gets there first),
// and that event reaches every client like any other. While this instance
// serves clients of the run it says so in the store (every graceMs / 3, for
// graceMs), so the holder's grace period waits for them. With no client for
// graceMs the core drops the copy (the run goes on at its holder); one that
// read too late (the stored log trimmed past it) ends its streams: its
// clients resume on a fresh copy.
import { RunStream } from './run-stream.js';

/** A stored entry ({ n, seq, state, terminal, started, text }) as the core reads it. */
export function coreEntry(stored) {
  const flags = `${stored.state ? 's' : ''}${stored.terminal ? 't' : ''}${stored.started ? 'r' : ''}`;
  return { n: stored.n, seq: stored.seq, flags, text: stored.text };
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
  #over = false; // the stored log's terminal event is in: the run is over (else a dropped copy is forgotten)

  /** A copy of the run `stored` ({ meta, leased, entries }: RunStore.read(key, 0)) on `thread`. */
  constructor({ store, stored, thread, config, hooks }) {
    const { meta } = stored;
    super({ key: meta.key, runId: meta.runId, thread, fingerprint: meta.fingerprint, config, hooks, followed: true });
    this.#store = store;
    this.#leaseMs = config.runLeaseMs;
    const first = stored.entries[0];
    const afterN = first === undefined ? meta.lastN : first.n - 1;
    const seq = first === undefined ? meta.seq : meta.trimmedSeq;
    this.life.step({ on: 'seed', afterN, seq, startedN: meta.startedN, startedText: meta.startedText });
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

  join(res, request, onHead) {
    const joined = super.join(res, request, onHead);
    this.#markPresent();
    return joined;
  }

  /**
   * An abort asked here ('client': X-AGUI-Abort with the starter's
   * credentials, checked by the caller) is asked of the holder through the
   * store; 'closed' (this proxy shuts down) only ends the copy's connections,
   * without an event: the run goes on, its clients resume elsewhere.
   */
  abort(reason) {
    if (this.finished) return false;
    this.carry(this.life.step({ on: 'abort', reason, requester: this.fingerprint }));
    return true;
  }

  act(action) {
    switch (action.do) {
      case 'ask-abort':
        this.#store.requestAbort(this.key, this.fingerprint).catch((error) => this.hooks.report?.(error));
        return undefined;
      case 'stop-upstream':
        return this.#stop();
      default:
        return super.act(action);
    }
  }

  // Over: kept for late resumes. Dropped (no client for graceMs, or it read too late to go on
  // exactly): forgotten, so that the next client reads a fresh copy.
  done() {
    this.#stop();
    super.done();
    if (this.#over) this.hooks.finished(this);
    else this.hooks.forget(this);
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
    const stored = await this.#store.read(this.key, this.lastN);
    if (stored === null || this.#timer === null) return;
    this.#ingest(stored.entries);
    if (!check || stored.meta.status !== 'live' || stored.leased) return;
    if (await this.#store.lose(this.key)) this.hooks.counters.runsLost++;
    this.#again = true; // read the run-lost event
  }

  #ingest(entries) {
    if (entries.length === 0) return;
    if (entries.at(-1).terminal) this.#over = true;
    this.carry(this.life.step({ on: 'logged', entries: entries.map(coreEntry) }));
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
