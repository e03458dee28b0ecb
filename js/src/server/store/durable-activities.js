// A store-bound thread's activities (docs/wire.md section 11), what
// emitter.activities is for createStateEmitter({ store, key }): stored with the
// thread, so an attach on another instance, a resume or a restart starts each
// activity with its snapshot or its exact replay, and no instance overwrites
// another's write of an activity.
//
// The core decides (src/emit/activity_record.h): the local ActivityEmitter
// (option record) computes each write's events and the ops that carry them onto
// the thread's activity record, a store line of its own under
// activityRecordKey(key), guarded by tests of the line each activity continues.
// This file does the I/O: a write is returned once the record holds it; one
// that lost a race to another instance's write of the same activity adopts the
// record and is written again; a catch-up first adopts the record.
import { failureError } from '../../engine/errors.js';
import { kActivityCatchUp, kActivityStream, kStateText } from '../../engine/internals.js';
import { kAdoptRecord, kRecordStale, kSettleRecord, kTakeRecordOps } from '../activity-internals.js';

export class DurableActivities {
  #local; // the ActivityEmitter (record: true)
  #open; // () => Promise<the record's DurableStateEmitter>
  #record = null;
  #queue = Promise.resolve();

  /** @internal DurableStateEmitter.activities makes it */
  constructor(local, open) {
    this.#local = local;
    this.#open = open;
  }

  /** @internal the local ActivityEmitter (catch-ups and run streams answer from it once synced) */
  get local() {
    return this.#local;
  }

  /** As ActivityEmitter.snapshot(), once the store holds it: Promise<events>. */
  snapshot(messageId, activityType, content, options) {
    return this.#serial(() => this.#commit((local) => local.snapshot(messageId, activityType, content, options)));
  }

  /** As ActivityEmitter.patch(), once the store holds it: Promise<events>. */
  patch(messageId, activityType, ops) {
    return this.#serial(() => this.#commit((local) => local.patch(messageId, activityType, ops)));
  }

  /**
   * As ActivityEmitter.write(), once the store holds it: Promise<{ events,
   * dropped, error }>; dropped 'store-unavailable' / 'store-conflict' when it
   * could not be stored (nothing was sent).
   */
  write(event, options) {
    return this.#serial(async () => {
      try {
        return await this.#commit((local) => local.write(event, options));
      } catch (error) {
        return { events: [], dropped: error?.code ?? 'store-unavailable', error };
      }
    });
  }

  /** Brings the activities to the stored record (another instance's writes, a restart). */
  sync() {
    return this.#serial(() => this.#adopt());
  }

  content(messageId) {
    return this.#local.content(messageId);
  }

  seq(messageId) {
    return this.#local.seq(messageId);
  }

  get epoch() {
    return this.#local.epoch;
  }

  get size() {
    return this.#local.size;
  }

  encode(event) {
    return this.#local.encode(event);
  }

  /** @internal as ActivityEmitter's */
  [kActivityCatchUp](activities, stream) {
    return this.#local[kActivityCatchUp](activities, stream);
  }

  /** @internal as ActivityEmitter's */
  [kActivityStream]() {
    return this.#local[kActivityStream]();
  }

  dispose() {
    this.#record?.dispose();
    this.#local.dispose();
  }

  #serial(fn) {
    const run = this.#queue.then(fn);
    this.#queue = run.catch(() => {});
    return run;
  }

  async #recordLine() {
    this.#record ??= await this.#open();
    return this.#record;
  }

  async #adopt() {
    const record = await this.#recordLine();
    await record.refresh();
    this.#local[kAdoptRecord](record[kStateText]());
  }

  // write(local) computes the events (a refusal throws, nothing changed); they are returned once
  // stored. What follows the record's answer is the core's (RecordCommits, src/emit/activity_record.h).
  async #commit(write) {
    if (this.#local[kRecordStale]()) await this.#adopt();
    for (;;) {
      const out = write(this.#local);
      const ops = this.#local[kTakeRecordOps]();
      if (ops.length === 0) return out;
      const record = await this.#recordLine();
      let failure = null;
      try {
        await record.patch(ops);
      } catch (error) {
        failure = error;
      }
      const step = this.#local[kSettleRecord](failure === null ? null : String(failure?.code ?? 'store-unavailable'));
      if (step.next === 'done') return out;
      if (step.next === 'raise') throw failure;
      if (step.next === 'fail') throw failureError(step, 'store-conflict', step.message);
      await this.#adopt();
    }
  }
}
