// A held run's log in the store (run-store.js), as the holder writes it:
// opened when the run starts (the thread's running run is named), appended
// batch by batch before anything is published, its lease renewed every
// leaseMs / 3. Another instance may ask for an abort there (seen at the next
// renewal). When the lease is lost (this instance stalled past it, or the
// store refused or stayed unreachable for leaseMs), the run is lost: the
// holder stops the upstream and ends its clients' streams with the run-lost
// RUN_ERROR the store holds (written by whichever instance came first, this
// one included), or, when the store cannot be read, with the core's own.
// A store that cannot be reached when the run starts: the run goes on with
// its log here only, as without a store.
import { coreEntry } from './remote-run.js';

const RETRY_MS = 50; // between attempts at a write the store did not answer

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

export class StoredRunLog {
  #store; // RunStore
  #leaseMs;
  #counters;
  #report;
  #run = null;
  #opened = null; // Promise<boolean>: false when the store could not be reached
  #timer = null;
  #lastWrite = 0; // when the store last took a write or a renewal (Date.now())
  #lost = false;

  constructor(store, { leaseMs, counters, report }) {
    this.#store = store;
    this.#leaseMs = leaseMs;
    this.#counters = counters;
    this.#report = report;
  }

  /** The run starts: its log is created in the store and its lease kept. */
  start(run) {
    this.#run = run;
    this.#lastWrite = Date.now();
    const { key, runId, fingerprint } = run;
    this.#opened = this.#store.open({ key, threadId: run.thread.id, runId, fingerprint }).then(() => true, (error) => {
      this.#report(error);
      return false;
    });
    this.#timer = setInterval(() => this.#renew(), Math.max(1, Math.floor(this.#leaseMs / 3)));
    this.#timer.unref();
  }

  /** Stops renewing (the run is over: its terminal event released the lease). */
  stop() {
    clearInterval(this.#timer);
    this.#timer = null;
  }

  /** True when another instance serves clients of this run now (the grace period waits for them). */
  present() {
    return this.#store.present(this.#run.key);
  }

  /** Commits `batch` (the core's entries): true once it landed (or the log is this instance's only), false when the run is lost. */
  async append(batch) {
    if (!(await this.#opened)) return true;
    for (;;) {
      if (this.#lost) return false;
      try {
        const { ok } = await this.#store.append(this.#run.key, batch);
        if (!ok) return this.#lose(null);
        this.#lastWrite = Date.now();
        return true;
      } catch (error) {
        if (Date.now() - this.#lastWrite > this.#leaseMs) return this.#lose(error);
        await sleep(RETRY_MS);
      }
    }
  }

  async #renew() {
    if (this.#lost || !(await this.#opened) || this.#timer === null) return;
    try {
      const answer = await this.#store.renew(this.#run.key, this.#run.thread.id, this.#run.runId);
      if (this.#timer === null) return;
      this.#lastWrite = Date.now();
      if (answer === 'lost') await this.#lose(null);
      else if (answer === 'abort' && this.#run.abort('client')) this.#counters.aborts.client++;
    } catch {
      // an unreachable store: the next write retries until the lease would have expired
    }
  }

  // The run is lost to this instance: its stream ends with the store's run-lost event (or its own).
  async #lose(error) {
    if (this.#lost) return false;
    this.#lost = true;
    this.stop();
    if (error) this.#report(error);
    const run = this.#run;
    let entries = [];
    try {
      if (await this.#store.lose(run.key)) this.#counters.runsLost++;
      entries = (await this.#store.read(run.key, run.lastN))?.entries ?? [];
    } catch (thrown) {
      this.#report(thrown);
    }
    if (!entries.some((entry) => entry.terminal)) this.#counters.runsLost++; // the core ends it with its own run-lost
    run.lose(entries.map(coreEntry));
    return false;
  }
}
