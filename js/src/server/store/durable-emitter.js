// DurableStateEmitter: a StateEmitter bound to one key of a store (contract.js),
// what createStateEmitter({ store, key }) returns. A local StateEmitter
// computes the events; each batch is committed to the store (with the new seq,
// atomically, only if the key is still where this emitter last saw it) before
// it is returned, so what a caller sends has landed, and two
// instances writing one key never fork its seq: the loser re-reads the
// store's line (state, seq, epoch, log: adoptHistory), recomputes and retries.
//
// The store unreachable: the emitter goes on alone under a fresh epoch of its
// own (a line no other instance can write, so no client can be handed two
// versions of one seq), sending a snapshot to start it; catch-ups get
// snapshots; it retries the store every second and, when it answers, makes
// its line the stored one (or, if another instance wrote meanwhile, continues
// the stored line with its state on top) and logs it.
//
// No O(state) work per write: a batch carries its events, and the whole state
// only now and then. When it does, the state at a stored line's head, and the
// committed state (moved along each committed batch, what `state` answers
// while a write is under way) are the core's rules (StoreLine,
// src/emit/store_line.h), the same a Python emitter on the key follows.
import { syncError } from '../../engine/errors.js';
import { kActivitiesInUse, kCommitThrough, kInternals, kStateText, kStoreCatchUp, kWriteThrough } from '../../engine/internals.js';
import { kSideLine, kSyncActivities, kUpdateRebased } from '../activity-internals.js';
import { ActivityEmitter } from '../activity-emitter.js';
import { DurableActivities } from './durable-activities.js';
import { activityOptions, emitterOptions, randomEpoch } from '../emitter-options.js';
import { catchUp } from '../catch-up.js';
import { checkKey, checkStore } from './contract.js';
import { Fanout } from './fanout.js';
import { buildLocal, copyArgument, eventsAfter, eventsOf, freshEpoch, lineOf, lineRules, logRecords, snapshotCatchUp, withEvents } from './durable-line.js';
import { wireFields, withWireFields } from '../../engine/wire-meta.js';

const RETRY_MS = 1000; // the timer that asks the core whether a retry of an unreachable store is due
const UNREAD = Symbol('unread');

export class DurableStateEmitter {
  #store;
  #key;
  #create; // options -> Promise<StateEmitter>
  #options; // the local emitters' options (no epoch, startSeq, initialState)
  #rules; // the line's rules (StoreLine): when a write carries the state, the committed state
  #limits; // the log's caps: the replay ring's
  #local; // the StateEmitter computing the events
  #stored; // the store's line as last seen: { epoch, seq }
  #held = UNREAD; // the committed state as read while a write is under way
  #reseed = false; // the rules lost the committed state: seed it before the next write
  #degraded = null; // { since, reason } while the line is this process's own
  #inFlight = false; // #local is ahead of #stored (a write under way): the core's loop says so
  #loop; // the write loop's decisions (CommitLoopFacade, src/emit/commit_loop.h)
  #loopAnswer = null;
  #rebaseView = null; // the state this writer last gave update({ rebase }): its next change is measured from it
  #queue = Promise.resolve();
  #retryTimer = null;
  #disposed = false;
  #carried = {}; // stats of the local emitters replaced so far
  #fanout = new Fanout(); // subscribe(): every event of the key's line, once, in order
  #counters = { commits: 0, stateWrites: 0, conflicts: 0, reloads: 0, degradations: 0, recoveries: 0 };
  #activities = null; // DurableActivities: the thread's, stored beside it (docs/wire.md section 11)
  #sideLines = new Map(); // name -> Promise<DurableStateEmitter>: [kSideLine]

  /** @internal use createStateEmitter({ store, key }) */
  constructor({ store, key, create, options, local, stored, rules }) {
    this.#store = store;
    this.#rules = rules;
    this.#key = key;
    this.#create = create;
    this.#options = options;
    this.#limits = rules.caps();
    this.#local = local;
    this.#stored = { epoch: stored.epoch, seq: stored.seq };
    this.#loop = new (local[kInternals]().engine.CommitLoopFacade)();
  }

  /**
   * The thread's activities, stored with the thread (docs/wire.md section 11):
   * as StateEmitter.activities, with snapshot(), patch() and write() returning
   * Promises that resolve once the store holds them.
   */
  get activities() {
    this.#check();
    if (this.#activities === null) {
      const engine = this.#local[kInternals]().engine;
      const options = { ...activityOptions(this.#options), epoch: randomEpoch(), record: true };
      const local = ActivityEmitter.create(engine, JSON.stringify(options));
      const key = engine.module.activityRecordKey(this.#key);
      const maxDepth = (this.#options.maxDepth ?? 128) + 2; // record > entry > content
      this.#activities = new DurableActivities(local, () => this.#openOwnLine(key, maxDepth));
    }
    return this.#activities;
  }

  /**
   * @internal a store line of the library's own beside the thread (the core's sideLineKey(name, key),
   * out of every caller's reach: checkKey refuses a NUL first), opened once: Promise<DurableStateEmitter>;
   * `stored`: null rather than a new line when the store holds none (a reader creates nothing).
   */
  async [kSideLine](name, { stored = false } = {}) {
    this.#check();
    let line = this.#sideLines.get(name);
    if (line === undefined) {
      const key = this.#local[kInternals]().engine.module.sideLineKey(name, this.#key);
      if (stored && (await this.#store.head(key)) === null) return null;
      this.#check(); // (disposed meanwhile: nothing opened that nobody frees)
      line = this.#sideLines.get(name) ?? this.#openOwnLine(key, this.#options.maxDepth);
      line.catch(() => this.#sideLines.delete(name)); // (unreachable: opened again next time)
      this.#sideLines.set(name, line);
    }
    return line;
  }

  // A store line of the library's own at `key` (a NUL-first key, which openStoreEmitter takes only as internal).
  #openOwnLine(key, maxDepth) {
    const { wasmBinary, locateFile } = this.#options;
    return openStoreEmitter({ store: this.#store, key, wasmBinary, locateFile, maxDepth }, this.#create, { internal: true });
  }

  /** @internal the local ActivityEmitter if the thread's activities are in use, else null */
  [kActivitiesInUse]() {
    return this.#activities?.local ?? null;
  }

  /** @internal the committed state's JSON text (the activity record's reader) */
  [kStateText]() {
    return this.#committedText();
  }

  /** @internal the thread's activities brought to the stored record, after the writes queued before */
  [kSyncActivities]() {
    return this.#serial(() => this.#syncActivities());
  }

  // Before a catch-up: the thread's stored activities, as the record holds them (none stored: nothing to do).
  async #syncActivities() {
    try {
      if (this.#activities === null) {
        const key = this.#local[kInternals]().engine.module.activityRecordKey(this.#key);
        if ((await this.#store.head(key)) === null) return;
      }
      await this.activities.sync();
    } catch {
      // unreachable or unreadable: the activities this process holds answer
    }
  }

  /** The key this emitter is bound to. */
  get key() {
    return this.#key;
  }

  /** The seq clients can hold: of the last returned (committed) event. */
  get seq() {
    this.#check();
    return this.#inFlight ? this.#stored.seq : this.#local.seq;
  }

  /** The epoch of that seq. */
  get epoch() {
    this.#check();
    return this.#inFlight ? this.#stored.epoch : this.#local.epoch;
  }

  /** The state at `seq`. Treat it as read-only. */
  get state() {
    this.#check();
    if (!this.#inFlight) return this.#local.state;
    if (this.#held === UNREAD) this.#held = JSON.parse(this.#committedText()); // parsed only when read
    return this.#held;
  }

  /** True while the store is unreachable and this emitter goes on alone. */
  get degraded() {
    return this.#degraded !== null;
  }

  /**
   * As StateEmitter.update(), once the events are committed: Promise<events>.
   * The whole state is written (the last writer wins), unless `rebase`: then
   * only this writer's change goes on the line as it stands, whoever wrote
   * meanwhile: the core's rebase diff from the state this writer last gave
   * (its previous update({ rebase }), else the state when it first did) to
   * newState; the whole state only where that change no longer applies.
   */
  async update(newState, { rebase = false } = {}) {
    const copy = copyArgument(newState);
    if (rebase !== true) return this.#serial(() => this.#commit((e) => e.update(copy)));
    return this.#serial(async () => {
      const next = JSON.stringify(copy);
      const base = this.#rebaseView ?? this.#local[kStateText]();
      // The core fits this writer's change to the line as it stands at each attempt (a lost race moves it).
      const out = await this.#commit((e) => e[kUpdateRebased](base, next));
      this.#rebaseView = next;
      return out;
    });
  }

  /** As StateEmitter.patch(), once committed. A retry after a lost race re-applies the ops to the winner's state. */
  async patch(ops) {
    const copy = copyArgument(ops);
    return this.#serial(() => this.#commit((e) => e.patch(copy)));
  }

  /**
   * A write made by another facade into the local emitter's (fn(facade) returns
   * its events or throws its refusal; the proxy's received states,
   * server/upstream-cursor.js), once committed: Promise<events>. fn runs again
   * on the reloaded local emitter after a lost race, as update() does.
   */
  async [kCommitThrough](fn) {
    return this.#serial(() => this.#commit((e) => e[kWriteThrough](fn)));
  }

  /** As StateEmitter.applyEdits(), once committed: Promise<{ events, results }>. */
  async applyEdits(edits, policy, { epoch = null } = {}) {
    const [e1, p1] = [copyArgument(edits), copyArgument(policy)];
    return this.#serial(() => this.#commit((e) => e.applyEdits(e1, p1, { epoch })));
  }

  /**
   * The catch-up of docs/wire.md section 3 for `request` (as catchUp() in
   * agui-state-sync/server, which calls this): first brought up to the
   * store's line (another instance may have written), then answered from the
   * log; a snapshot when the store is unreachable.
   */
  catchUp(request) {
    return this.#serial(async () => {
      if (this.#degraded) await this.#tryRecover();
      if (this.#degraded) return snapshotCatchUp(this.#local, request);
      await this.#syncActivities();
      try {
        await this.#refresh();
      } catch {
        return snapshotCatchUp(this.#local, request); // cannot tell what the store holds now
      }
      return catchUp(this.#local, request);
    });
  }

  /**
   * Runs fn(answer) when no write is under way, and none starts until fn
   * returns (fn is synchronous): answer(request) is the catch-up, as
   * catchUp() gives it, but synchronous. For a caller that must compose the
   * catch-up with other output in one step (the proxy's resumed streams).
   */
  withCatchUp(fn) {
    return this.#serial(async () => {
      if (this.#degraded) await this.#tryRecover();
      await this.#syncActivities();
      let vouched = !this.#degraded;
      if (vouched) vouched = await this.#refresh().then(() => true, () => false);
      return fn((request) => (vouched ? catchUp(this.#local, request) : snapshotCatchUp(this.#local, request)));
    });
  }

  /** @internal for catchUp() / writeCatchUp() in server.js */
  [kStoreCatchUp](request) {
    return this.catchUp(request);
  }

  /** A STATE_SNAPSHOT at `seq`, after the writes queued before it. */
  snapshot() {
    return this.#serial(async () => this.#local.snapshot());
  }

  /** Brings this emitter up to what other instances wrote to its key (catchUp() does it itself). */
  refresh() {
    return this.#serial(async () => {
      if (this.#degraded) return this.#tryRecover(true);
      return this.#refresh();
    });
  }

  /**
   * listener(events) gets every event of the key's line, in order, once each:
   * this emitter's own writes once committed, and those of other instances as
   * this emitter finds them (catch-ups, writes that lost a race, the store's
   * notification of a write when it has one: memoryStore() and redisStore()
   * (pub/sub) do; and a poll every `pollMs`, or every max(pollMs, 1 s) as a
   * safety net with notifications). An instance's fan-out to
   * its clients: write each event to each of them. A gap (events another
   * instance wrote and the log trimmed before they were seen) shows to the
   * clients as a gap, which they heal by a catch-up. Returns unsubscribe().
   */
  subscribe(listener, { pollMs = 100 } = {}) {
    this.#check();
    // The poll leaves an unreachable store to the retry pace (RETRY_MS), unlike an explicit refresh().
    const poll = () => this.#serial(() => (this.#degraded ? this.#tryRecover() : this.#refresh())).catch(() => {});
    const watch = typeof this.#store.watch === 'function' ? (onChange) => this.#store.watch(this.#key, onChange) : null;
    return this.#fanout.add(listener, pollMs, poll, watch);
  }

  /** "id: <seq>\ndata: <JSON>\n\n", as StateEmitter.encode(). */
  encode(event, options) {
    this.#check();
    return this.#local.encode(event, options);
  }

  /** ": hb <seq>\n\n" at `seq`. */
  heartbeat() {
    return `: hb ${this.seq}\n\n`;
  }

  /** The local emitters' counters (summed over reloads), and `store`: commits, conflicts, reloads, degradations, recoveries, degraded. */
  stats() {
    this.#check();
    const stats = this.#local.stats();
    for (const [name, value] of Object.entries(this.#carried)) stats[name] += value;
    return { ...stats, store: { ...this.#counters, degraded: this.degraded } };
  }

  /** Frees the local engine object; pending writes fail with 'disposed'. The store keeps the key. */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    clearInterval(this.#retryTimer);
    this.#fanout.clear();
    this.#activities?.dispose();
    for (const line of this.#sideLines.values()) line.then((opened) => opened.dispose(), () => {});
    this.#local.dispose();
    this.#rules.dispose();
    this.#loop.delete();
  }

  // Runs fn after everything queued before it (one write or catch-up at a time).
  #serial(fn) {
    const run = this.#queue.then(() => {
      this.#check();
      return fn();
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  #check() {
    if (this.#disposed) throw syncError('disposed', 'this DurableStateEmitter was disposed');
  }

  // apply(local) computes the events; they are returned (and published) once the store holds them.
  async #commit(apply) {
    const out = await this.#commitOnce(apply);
    this.#fanout.publish(eventsOf(out));
    return out;
  }

  // The write loop: the core (CommitLoop, src/emit/commit_loop.h) decides each next step, this does it.
  async #commitOnce(apply) {
    let next = this.#loopStep({ on: 'begin', now: Date.now() });
    let out;
    let failure = null;
    let opening = null; // degraded before the write's events were computed: its own line's snapshot leads them
    for (;;) {
      switch (next) {
        case 'recover': {
          const reset = await this.#tryReset();
          next = this.#loopStep({ on: 'recovered', result: reset.result });
          if (reset.result === 'written-meanwhile') await this.#writeOnTop(reset.mine);
          break;
        }
        case 'apply':
          this.#hold();
          out = apply(this.#local); // a refusal throws here, and nothing changed
          next = this.#loopStep({ on: 'applied', events: eventsOf(out).length });
          break;
        case 'append': {
          let answer;
          try {
            answer = (await this.#append(eventsOf(out))) ? 'ok' : 'conflict';
            if (answer === 'conflict') this.#counters.conflicts++;
          } catch (error) {
            failure = error;
            answer = 'error';
          }
          next = this.#loopStep({ on: 'appended', answer });
          break;
        }
        case 'reload':
          try {
            await this.#reload(); // the line that won; then recompute on it
            next = this.#loopStep({ on: 'reloaded', ok: true, random: Math.random() });
          } catch (error) {
            failure = error;
            next = this.#loopStep({ on: 'reloaded', ok: false });
          }
          break;
        case 'wait':
          await new Promise((resolve) => setTimeout(resolve, this.#loopAnswer.waitMs)); // out of lockstep
          next = 'apply';
          break;
        case 'degrade': {
          const snapshot = await this.#degrade(failure);
          if (out === undefined) opening = snapshot;
          else out = withEvents(out, [snapshot]); // out's events never left: the new line's snapshot holds them
          next = this.#loopStep({ on: 'degraded' });
          break;
        }
        case 'fail':
          throw syncError('store-conflict', `key ${JSON.stringify(this.#key)}: ${this.#loopAnswer.message}`);
        default: // 'return'
          return opening === null ? out : withEvents(out, [opening, ...eventsOf(out)]);
      }
    }
  }

  #loopStep(input) {
    this.#loopAnswer = JSON.parse(this.#loop.step(JSON.stringify(input)));
    this.#inFlight = this.#loopAnswer.inFlight;
    return this.#loopAnswer.next;
  }

  // Before a write: `state` answers the committed state while it is under way.
  #hold() {
    this.#held = UNREAD;
    if (!this.#reseed) return;
    this.#rules.seed(this.#local[kStateText]()); // (a committed batch the rules could not follow: never seen, but never wrong)
    this.#reseed = false;
  }

  // True when `events` (computed from #stored) landed; false when another writer got there first.
  async #append(events) {
    const records = logRecords(events);
    const bytes = records.reduce((sum, r) => sum + Buffer.byteLength(r.text), 0);
    const withState = this.#rules.needsState(records.length, bytes, records.some((r) => r.snapshot));
    const { ok } = await this.#store.append(this.#key, {
      baseSeq: this.#stored.seq, epoch: this.#stored.epoch, state: withState ? this.#local[kStateText]() : undefined, events: records, ...this.#limits,
    });
    if (ok) {
      this.#stored = { epoch: this.#local.epoch, seq: this.#local.seq };
      this.#reseed = !this.#rules.committed(withState, records.length, bytes, `[${records.map((r) => r.text).join(',')}]`);
      this.#counters.commits++;
      if (withState) this.#counters.stateWrites++;
    }
    return ok;
  }

  // The committed state's JSON text (the local's when no write is under way, or the rules lost it).
  #committedText() {
    return (this.#inFlight ? this.#rules.committedStateText() : '') || this.#local[kStateText]();
  }

  // Continues the store's line (the key expired meanwhile: starts it again from ours).
  async #reload() {
    this.#counters.reloads++;
    let stored = await this.#store.load(this.#key);
    if (stored === null) {
      // Expired meanwhile: start it again from our committed line.
      const ours = { ...this.#stored, state: this.#committedText() };
      if ((await this.#store.init(this.#key, ours)).ok) stored = { ...ours, events: [] };
    }
    stored ??= await this.#store.load(this.#key);
    if (stored === null) throw syncError('store-unavailable', 'the key vanished while it was being read');
    const { local, events } = await buildLocal(this.#create, this.#options, stored, this.#rules, this.#key);
    this.#replaceLocal(local);
    const seen = this.#stored;
    this.#stored = { epoch: stored.epoch, seq: stored.seq };
    this.#held = UNREAD;
    this.#reseed = false; // the rules hold the stored line's head now
    this.#fanout.publish(eventsAfter(events, seen)); // what other instances wrote since
  }

  // Reloads when the store's line moved past ours.
  async #refresh() {
    const head = await this.#store.head(this.#key);
    if (head && head.seq === this.#stored.seq && head.epoch === this.#stored.epoch) return;
    await this.#reload();
  }

  #replaceLocal(local) {
    const old = this.#local;
    for (const [name, value] of Object.entries(old.stats())) this.#carried[name] = (this.#carried[name] ?? 0) + value;
    old.dispose();
    this.#local = local;
  }

  // The store failed mid-write: go on alone under a fresh epoch; the new line's snapshot starts it.
  async #degrade(error) {
    const old = this.#local;
    const snapshot = old.snapshot(); // repeats the recent edit verdicts: they carry over
    const epoch = freshEpoch();
    const local = await this.#create({ ...this.#options, epoch, startSeq: old.seq, initialState: old.state });
    local.adoptHistory([{ ...snapshot, metadata: withWireFields(snapshot.metadata, { ...wireFields(snapshot), epoch }) }]);
    this.#replaceLocal(local);
    this.#degraded = { since: Date.now(), reason: error?.message ?? String(error) };
    this.#counters.degradations++;
    this.#log('warn', `store unreachable (${this.#degraded.reason}); going on alone at epoch ${epoch}, seq ${local.seq}: live events flow, catch-ups get snapshots`);
    this.#retryTimer ??= setInterval(() => this.#serial(() => this.#tryRecover()).catch(() => {}), RETRY_MS);
    this.#retryTimer.unref?.();
    return local.snapshot();
  }

  // Makes this emitter's own line the stored one, if the store answers and a try is due (the core's pace).
  async #tryRecover(force = false) {
    if (this.#loopStep({ on: 'tick', now: Date.now(), force }) !== 'recover') return;
    const reset = await this.#tryReset();
    this.#loopStep({ on: 'recovered', result: reset.result });
    if (reset.result === 'written-meanwhile') await this.#writeOnTop(reset.mine);
  }

  // store.reset: 'ok' (the emitter's line is the stored one now), 'written-meanwhile' (reloaded: the stored line goes on), 'unreachable'.
  async #tryReset() {
    const line = lineOf(this.#local);
    let result;
    try {
      result = await this.#store.reset(this.#key, this.#stored, line);
    } catch {
      return { result: 'unreachable' };
    }
    if (result.ok) {
      this.#stored = { epoch: line.epoch, seq: line.seq };
      this.#rules.restart(line.state); // the stored state is this line's, its log empty
      this.#recovered(`store reachable again; continuing at epoch ${line.epoch}, seq ${line.seq}`);
      return { result: 'ok' };
    }
    // Written meanwhile (by another instance, or our write that timed out landed after all):
    // continue the stored line, with this emitter's state on top (the last writer wins).
    const mine = JSON.parse(line.state);
    try {
      await this.#reload();
    } catch {
      return { result: 'unreachable' };
    }
    this.#recovered(`store reachable again; the key was written meanwhile, continuing its epoch ${this.#stored.epoch} from seq ${this.#stored.seq} with this instance's state`);
    return { result: 'written-meanwhile', mine };
  }

  async #writeOnTop(mine) {
    try {
      await this.#commit((e) => e.update(mine));
    } catch (error) {
      this.#log('warn', `this instance's state could not be written on top (${error.message}); the stored state stands`);
    }
  }

  #recovered(message) {
    this.#degraded = null;
    clearInterval(this.#retryTimer);
    this.#retryTimer = null;
    this.#counters.recoveries++;
    this.#log('info', message);
  }

  #log(level, message) {
    this.#store.log?.(level, `key ${JSON.stringify(this.#key)}: ${message}`);
  }
}

/**
 * createStateEmitter({ store, key, ...options }): loads the key's line (state,
 * seq, epoch, log) and continues it, or starts it from the options (epoch,
 * startSeq, initialState count only for a new key). Rejects with
 * 'store-unavailable' when the store is unreachable.
 */
export async function openStoreEmitter(options, create, { internal = false } = {}) {
  const { store, key, ...rest } = options;
  checkStore(store, 'createStateEmitter() option store');
  if (!internal) checkKey(key, 'createStateEmitter() option key'); // (an activity record's key is the library's own)
  emitterOptions(rest); // a wrong option fails before any I/O
  const { epoch, startSeq, initialState, ...base } = rest;
  const rules = await lineRules(store, base);
  try {
    return await openLine({ store, key, create, options: base, rules }, rest);
  } catch (error) {
    rules.dispose();
    throw error;
  }
}

// The key's line continued, or started from `rest` (the options with epoch, startSeq, initialState).
async function openLine(bound, rest) {
  const { store, key, create, options, rules } = bound;
  let stored = await store.load(key);
  if (stored === null) {
    const local = await create(rest);
    const line = lineOf(local);
    if ((await store.init(key, line)).ok) {
      rules.seed(line.state);
      return new DurableStateEmitter({ ...bound, local, stored: line });
    }
    local.dispose(); // another instance created it first
    stored = await store.load(key);
    if (stored === null) throw syncError('store-unavailable', `key ${JSON.stringify(key)} vanished while it was being created`);
  }
  const { local } = await buildLocal(create, options, stored, rules, key);
  return new DurableStateEmitter({ ...bound, local, stored });
}
