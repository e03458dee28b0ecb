// One AG-UI thread as the proxy sequences it: a StateEmitter whose state is
// the last upstream state the proxy can vouch for (a snapshot the upstream
// sent, or its deltas applied cleanly on top of one, plus the client edits
// the proxy accepted since), the catch-up answers of docs/wire.md section 3,
// the re-stamping of upstream state events, and clients' edits (section 9).
import { createStateEmitter } from '../server/emitter.js';
import { after, patchIfApplies } from '../server/emitter-writes.js';
import { judgeEdits } from '../server/run-edits.js';
import { catchUp } from '../server/catch-up.js';
import { diffOps } from '../server/state-diff.js';

export class Thread {
  id;
  emitter;
  lastActive = Date.now();
  runs = new Set(); // runs of this thread the proxy still holds (live or kept for resumption)
  pins = 0; // requests setting up a run on it: not evictable meanwhile
  #state = undefined; // the vouched state (the upstream engine's or the emitter's object, never mutated)
  #stale = false; // #state is behind the emitter's (after a rebase): read it from the emitter when asked

  /** @internal use Thread.create() */
  constructor(id, emitter) {
    this.id = id;
    this.emitter = emitter;
  }

  static async create(id, emitterOptions, store = null) {
    // The emitter's initial {} is a placeholder, never sent: until the upstream
    // has described a state (vouched), runs start without a catch-up. With a
    // store, a thread that already has events there is vouched: its state is
    // what this proxy (or another instance) last sent for it.
    if (store === null) return new Thread(id, await createStateEmitter({ ...emitterOptions }));
    const thread = new Thread(id, await createStateEmitter({ ...emitterOptions, store, key: id }));
    if (thread.emitter.seq > 0) thread.#state = thread.emitter.state;
    return thread;
  }

  /** The emitter is bound to a store: its writes and catch-ups are promises. */
  get durable() {
    return typeof this.emitter.refresh === 'function';
  }

  /** True once the upstream has described a state of this thread. */
  get vouched() {
    return this.#state !== undefined || this.#stale; // after a rebase the state is the emitter's, still vouched
  }

  /** The vouched state (undefined before any). Read-only. */
  get state() {
    if (this.#stale) {
      this.#state = this.emitter.state;
      this.#stale = false;
    }
    return this.#state;
  }

  /**
   * What a client at `position` ({ lastSeq, epoch, reason, held }, from
   * readResyncRequest) needs to be current: [] when it is, the missed deltas,
   * or one snapshot. [] while nothing is vouched: there is nothing to send.
   */
  catchUpEvents(position) {
    if (!this.vouched) return [];
    return after(catchUp(this.emitter, { forwardedProps: { stateSync: position } }), (answer) => answer.events);
  }

  /**
   * Runs fn(catchUpEvents) with a synchronous catchUpEvents(position) (as
   * above) that stays true until fn returns: at once, or for a store-bound
   * emitter once no write is under way (a Promise).
   */
  withCatchUp(fn) {
    if (!this.durable) return fn((position) => this.catchUpEvents(position));
    const request = (position) => ({ forwardedProps: { stateSync: position } });
    return this.emitter.withCatchUp((answer) => fn((position) => (this.vouched ? answer(request(position)).events : [])));
  }

  /**
   * Re-stamps one state change the upstream engine applied (an 'applied'
   * outcome) and returns the sequenced events that carry it.
   *  - In step (this run wrote the emitter's current seq, so the emitter holds
   *    exactly the upstream's previous state): a delta goes through
   *    emitter.patch() with the upstream's own operations (O(delta), `test`
   *    ops kept); a snapshot through emitter.update(), which diffs it: what
   *    turns a snapshot-only upstream into deltas.
   *  - Out of step (another client's edit, another run, or another instance
   *    wrote since) and for a store-bound emitter: rebased. Only what the
   *    upstream changed goes on top of the thread's state: its delta, or the
   *    difference between its previous state (`cursor.view`) and its
   *    snapshot, so the others' writes stand where the upstream did not
   *    write. If that does not apply (the upstream wrote inside something
   *    another writer removed, or its `test` failed on the other's value), its
   *    difference without tests, and as a last resort its whole state
   *    (update(): the agent's state wins).
   *  - Before the thread has a vouched state: update() to the upstream's.
   */
  restamp(outcome, cursor) {
    const view = cursor.view;
    const done = (events, rebased) => {
      this.#state = rebased ? undefined : outcome.state;
      this.#stale = rebased;
      cursor.view = outcome.state;
      cursor.fromInput = false;
      cursor.inStep = !rebased;
      cursor.seq = this.emitter.seq;
      this.lastActive = Date.now();
      return events;
    };
    const inStep = !this.durable && cursor.inStep && this.emitter.seq === cursor.seq;
    if (!this.vouched || view === undefined || inStep) {
      const events = inStep && outcome.type === 'STATE_DELTA' ? patchIfApplies(this.emitter, outcome.event.delta) : null;
      return after(events ?? this.emitter.update(outcome.state), (out) => done(out, false));
    }
    const diff = () => diffOps(view, outcome.state);
    // A delta is relative to the upstream's previous state, unless that was the client's state.
    const tries = outcome.type === 'STATE_DELTA' && !cursor.fromInput ? [() => outcome.event.delta, diff] : [diff];
    return after(this.#rebase(tries), (out) => (out ? done(out, true) : after(this.emitter.update(outcome.state), (all) => done(all, false))));
  }

  // The first of `tries` (functions giving ops) that applies: its events, or null.
  #rebase(tries) {
    if (tries.length === 0) return null;
    const [first, ...rest] = tries;
    return after(patchIfApplies(this.emitter, first()), (events) => events ?? this.#rebase(rest));
  }

  /**
   * A client's edits (forwardedProps.stateSync.edits, checked by readRunEdits),
   * judged by the emitter under `policy` before the run is forwarded:
   * { events, results }, the accepted ones now part of the thread's state,
   * which the upstream is sent as RunAgentInput.state. `epoch`: the client's
   * (its baseSeqs count in it). null when the thread has no vouched state:
   * there is nothing to judge them against (the client's `state` already holds
   * them, and applying them to it again could apply them twice), so the run
   * goes upstream with the client's state as plain AG-UI sends it.
   */
  applyClientEdits(edits, epoch, policy) {
    if (!this.vouched) return null;
    return after(judgeEdits(this.emitter, edits, epoch, policy), (outcome) => {
      if (outcome.events.length) {
        this.#state = this.emitter.state; // vouched: the upstream's state with edits the proxy accepted
        this.#stale = false;
        this.lastActive = Date.now();
      }
      return outcome;
    });
  }

  /** No run and no request setting one up: the registry may forget it. */
  get idle() {
    return this.runs.size === 0 && this.pins === 0;
  }

  dispose() {
    this.emitter.dispose();
    this.#state = undefined;
    this.#stale = false;
  }
}

