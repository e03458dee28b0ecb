// One AG-UI thread as the proxy sequences it: a StateEmitter whose state is
// the last upstream state the proxy can vouch for (a snapshot the upstream
// sent, or its deltas applied cleanly on top of one, plus the client edits
// the proxy accepted since), the catch-up answers of docs/wire.md section 3,
// the re-stamping of upstream state events (each run's cursor decides how:
// run-cursor.js), and clients' edits (section 9). Its activities (section 11)
// are the emitter's: each upstream activity change its engine verified is
// re-stamped on them, as the core decides (ActivityFacade).
import { failureError } from '../engine/errors.js';
import { createStateEmitter } from '../server/emitter.js';
import { after } from '../server/emitter-writes.js';
import { judgeEdits } from '../server/run-edits.js';
import { catchUp, withActivities } from '../server/catch-up.js';
import { kActivitiesInUse, kActivityStream } from '../engine/internals.js';
import { kSeedText, kSideLine, kSyncActivities } from '../server/activity-internals.js';

export class Thread {
  id;
  emitter;
  lastActive = Date.now();
  runs = new Set(); // runs of this thread the proxy still holds (live or kept for resumption)
  pins = 0; // requests setting up a run on it: not evictable meanwhile
  upstreamView = undefined; // the upstream's own state of the thread at the end of its last run (run-cursor.js)
  #vouched = false; // the emitter's state is one the upstream described (not the placeholder)
  #upstreamLine = null; // a store-bound thread's: where the upstream's last state is kept ([kSideLine] name)
  #keeping = Promise.resolve(); // the last store write of upstreamView

  /** @internal use Thread.create() */
  constructor(id, emitter) {
    this.id = id;
    this.emitter = emitter;
  }

  /**
   * `upstream`: which upstream the proxy runs (its id in the store, so that a
   * fleet of proxies in front of one upstream shares what it last held, and
   * proxies in front of others keep theirs apart).
   */
  static async create(id, emitterOptions, store = null, upstream = null) {
    const thread = await Thread.#open(id, emitterOptions, store);
    if (thread.durable && upstream !== null) thread.#upstreamLine = `upstream:${upstream}`;
    return thread;
  }

  static async #open(id, emitterOptions, store) {
    // The emitter's initial {} is a placeholder, never sent: until the upstream
    // has described a state (vouched), runs start without a catch-up. With a
    // store, a thread that already has events there is vouched: its state is
    // what this proxy (or another instance) last sent for it.
    if (store === null) return new Thread(id, await createStateEmitter({ ...emitterOptions }));
    const thread = new Thread(id, await createStateEmitter({ ...emitterOptions, store, key: id }));
    thread.#vouched = thread.emitter.seq > 0;
    return thread;
  }

  /**
   * The upstream's own last state of this thread, as any instance kept it
   * (issue 40: a stateful upstream's next run may go through another
   * instance, or come after a restart). Unreachable: the one this instance holds.
   */
  async syncUpstreamView() {
    if (this.#upstreamLine === null) return;
    try {
      await this.#keeping;
      const line = await this.emitter[kSideLine](this.#upstreamLine, { stored: true });
      if (line === null) return; // (nothing kept yet)
      await line.refresh();
      if (line.seq > 0) this.upstreamView = line.state;
    } catch {
      // (the view this instance holds, if any)
    }
  }

  /**
   * Keeps `view`, the upstream's own state at the end of a run: in memory,
   * and for a store-bound thread in the store (a Promise, settled once stored
   * or failed; `report` hears of a failure).
   */
  keepUpstreamView(view, report) {
    this.upstreamView = view;
    if (this.#upstreamLine === null) return undefined;
    this.#keeping = this.#keeping.then(async () => {
      const line = await this.emitter[kSideLine](this.#upstreamLine);
      await line.update(view);
    }).catch((error) => report?.(error));
    return this.#keeping;
  }

  /** The emitter is bound to a store: its writes and catch-ups are promises. */
  get durable() {
    return typeof this.emitter.refresh === 'function';
  }

  /**
   * True once the upstream has described a state of this thread (for a
   * store-bound thread, once any instance wrote one: its emitter refreshes).
   */
  get vouched() {
    return this.#vouched || (this.durable && this.emitter.seq > 0);
  }

  /** The vouched state (undefined before any): the emitter's, parsed once per change. Read-only. */
  get state() {
    return this.#vouched ? this.emitter.state : undefined;
  }

  /**
   * What a client at `position` ({ lastSeq, epoch, reason, held, activities },
   * from readResyncRequest) needs to be current: [] when it is, the missed
   * deltas, or one snapshot, then its activities' (section 11). The state's
   * part is [] while nothing is vouched: there is nothing to send.
   */
  catchUpEvents(position, activityStream) {
    const request = { forwardedProps: { stateSync: position } };
    if (!this.vouched) return withActivities(this.emitter, request, { events: [] }, activityStream).events;
    return after(catchUp(this.emitter, request, activityStream), (answer) => answer.events);
  }

  /**
   * Runs fn(catchUpEvents) with a synchronous catchUpEvents(position,
   * activityStream) (as above) that stays true until fn returns: at once, or
   * for a store-bound emitter once no write is under way (a Promise).
   */
  withCatchUp(fn) {
    if (!this.durable) return fn((position, stream) => this.catchUpEvents(position, stream));
    const request = (position) => ({ forwardedProps: { stateSync: position } });
    return this.emitter.withCatchUp((answer) => fn((position, stream) => {
      const state = this.vouched ? answer(request(position)) : { events: [] };
      return withActivities(this.emitter, request(position), state, stream).events;
    }));
  }

  /** A run's stream of this thread's activities (which ones its client holds a position for); dispose() it. */
  activityStream() {
    return this.emitter.activities[kActivityStream]();
  }

  /** The content of activity `messageId` the proxy vouches for (the thread's), or null when it holds none. */
  activityContent(messageId) {
    return this.hasActivities ? this.emitter.activities.content(messageId) ?? null : null;
  }

  /**
   * The thread's activities as a run's upstream receiver starts from them (SSE
   * text, '' when none): a store-bound thread's brought to the store first.
   */
  async activitySeed() {
    if (typeof this.emitter[kSyncActivities] === 'function') await this.emitter[kSyncActivities]();
    return this.hasActivities ? this.emitter[kActivitiesInUse]()[kSeedText]() : '';
  }

  /** The thread has had activities (a catch-up then answers for them). */
  get hasActivities() {
    return this.emitter[kActivitiesInUse]() !== null;
  }

  /**
   * Re-stamps one activity change the upstream engine applied (an 'applied'
   * outcome naming a messageId; its `content` is the engine's verified
   * content) on the run's `activityStream`: the sequenced events that carry
   * it, [] when nothing changed (a Promise for a store-bound thread).
   * Throws (rejects) when the thread's activities refused it.
   */
  restampActivity(outcome, activityStream) {
    const written = this.emitter.activities.write(outcome.event, { verified: true, content: () => outcome.content, stream: activityStream });
    return after(written, ({ events, dropped, error }) => {
      if (dropped !== null) {
        throw error ?? failureError({ code: dropped }, 'invalid-event', `the activity event of ${outcome.messageId} cannot be re-stamped (${dropped})`);
      }
      this.lastActive = Date.now();
      return events;
    });
  }

  /**
   * Re-stamps one state change the upstream engine applied (an 'applied'
   * outcome) through the run's `cursor` (run-cursor.js): the sequenced events
   * that carry it (a Promise for a store-bound thread). Throws (rejects) when
   * the emitter refused it.
   */
  restamp(outcome, cursor) {
    return after(cursor.write(this.emitter, outcome), (events) => {
      this.#vouched = true;
      this.lastActive = Date.now();
      return events;
    });
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
      if (outcome.events.length) this.lastActive = Date.now();
      return outcome;
    });
  }

  /** No run and no request setting one up: the registry may forget it. */
  get idle() {
    return this.runs.size === 0 && this.pins === 0;
  }

  dispose() {
    this.emitter.dispose();
    this.#vouched = false;
  }
}

