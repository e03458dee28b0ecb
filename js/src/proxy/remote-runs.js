// Runs other instances hold, found through the store (run-store.js) and
// served here as copies (remote-run.js): by a Last-Event-ID's stream key, or
// as a thread's running run (an attach, a POST of the same runId). One copy
// per run per instance; it registers like a run this instance holds, so
// resumes, attaches and aborts find it the same way.
import { RemoteRun } from './remote-run.js';

export class RemoteRuns {
  #ctx; // the proxy's: registry, config, runHooks
  #store; // RunStore
  #opening = new Map(); // stream key -> the copy being made

  constructor(ctx, store) {
    this.#ctx = ctx;
    this.#store = store;
  }

  /** The run `key` (held here, or a copy of another instance's), or null when neither this instance nor the store has it. */
  byKey(key) {
    const known = this.#ctx.registry.lookup(key)?.run;
    if (known) return Promise.resolve(known);
    let pending = this.#opening.get(key);
    if (!pending) {
      pending = this.#open(key).finally(() => this.#opening.delete(key));
      this.#opening.set(key, pending);
    }
    return pending;
  }

  /** The thread's running run at another instance (a copy here), or null. */
  async runningOn(threadId) {
    const key = await this.#store.liveRunKey(threadId);
    if (key === null) return null;
    const run = await this.byKey(key);
    return run !== null && !run.finished && run.thread.id === threadId ? run : null;
  }

  async #open(key) {
    const stored = await this.#store.read(key, 0);
    if (stored === null) return null;
    const { registry, config, runHooks } = this.#ctx;
    const thread = await registry.thread(stored.meta.threadId);
    try {
      const run = new RemoteRun({ store: this.#store, stored, thread, config, hooks: runHooks });
      try {
        registry.addRun(run);
      } catch (error) {
        registry.bufferedBytes -= run.clearLog(); // the copy's events were charged as it read them
        run.dispose();
        throw error;
      }
      run.follow();
      return run;
    } finally {
      thread.pins--;
    }
  }
}
