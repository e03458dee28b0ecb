// ActivityEmitter: a thread's AG-UI 1.0 activities (ACTIVITY_SNAPSHOT /
// ACTIVITY_DELTA; docs/wire.md section 11) as the sender stamps them: each
// messageId its own sequenced document, with the state's diffs, digests,
// snapshot fallback and replay ring. One C++ ActivityFacade
// (src/facade/activity_facade.h) decides everything: how an agent's activity
// event goes on (write), and what a reconnecting client needs of each activity
// (the catch-up); this file does the calls. A StateEmitter carries one as
// `emitter.activities`, so catchUp(emitter, request) answers for both.
import { EngineLink } from '../engine/engine-link.js';
import { failureCode, failureError, syncTypeError } from '../engine/errors.js';
import { kActivityCatchUp, kActivityStream } from '../engine/internals.js';
import { kAdoptRecord, kRecordStale, kSeedText, kSettleRecord, kTakeRecordOps } from './activity-internals.js';
import { jsonText } from '../engine/options.js';

const isActivityType = (type) => type === 'ACTIVITY_SNAPSHOT' || type === 'ACTIVITY_DELTA';

function messageIdOf(messageId, who) {
  if (typeof messageId !== 'string') throw syncTypeError('invalid-argument', `${who} messageId must be a string`);
  return messageId;
}

/** A run's stream of a thread's activities: which ones its client holds a position for (the core's). */
class ActivityStream {
  #link;

  constructor(link) {
    this.#link = link;
    link.track(this);
  }

  /** The C++ ActivityStreamFacade (null once disposed). */
  get facade() {
    return this.#link.facade;
  }

  dispose() {
    this.#link.release(this);
  }
}

export class ActivityEmitter {
  #link;
  #epoch;

  /** @internal use emitter.activities (createStateEmitter) */
  constructor(link) {
    this.#link = link;
    this.#epoch = link.invoke((f) => f.epoch());
    link.track(this);
  }

  /** @internal the emitter of a loaded sender engine; `optionsJson`: the ActivityFacade's options. */
  static create(engine, optionsJson) {
    return new ActivityEmitter(EngineLink.create(engine, 'ActivityFacade', optionsJson, 'ActivityEmitter'));
  }

  /**
   * The app's ACTIVITY_SNAPSHOT of `messageId`: the events to send (the
   * activity's snapshot at seq 0 the first time, then the change: a delta, or
   * its snapshot when smaller; [] when nothing changed). `replace: false`
   * keeps an activity already held ([]).
   */
  snapshot(messageId, activityType, content, { replace = true } = {}) {
    const id = messageIdOf(messageId, 'activities.snapshot()');
    const text = jsonText(content, 'activities.snapshot() content');
    const result = this.#callJson((f) => f.snapshot(id, String(activityType ?? ''), text, replace !== false));
    if (!result.ok) throw this.#refusal('activities.snapshot()', result, 'invalid-json');
    return result.events;
  }

  /**
   * The app's ACTIVITY_DELTA: its RFC 6902 ops, atomically; the events that
   * carry them. Throws an AguiSyncError ('patch-failed' also for an activity
   * not held, 'precondition-failed', 'invalid-patch', 'limit-exceeded') with
   * `opIndex`; the activity is then unchanged.
   */
  patch(messageId, activityType, ops) {
    const id = messageIdOf(messageId, 'activities.patch()');
    const text = jsonText(ops, 'activities.patch() operations');
    const result = this.#callJson((f) => f.patch(id, String(activityType ?? ''), text));
    if (!result.ok) throw this.#refusal('activities.patch()', result, 'patch-failed');
    return result.events;
  }

  /**
   * An agent's activity event (what sequenceState() and the proxy pass):
   * { events, dropped, error }. events: the stamped events (the agent's other
   * members kept; [] when nothing changed or dropped), or [event] for any
   * other event. dropped: null, or why (a code) the event was not sent: a
   * delta that does not apply, and every later delta of that activity until
   * the agent's next ACTIVITY_SNAPSHOT. `verified`: an engine applied the
   * event to content it verified, and `content(messageId)` gives that content
   * when the thread's does not fit (the proxy).
   */
  write(event, { verified = false, content, stream } = {}) {
    if (!isActivityType(event?.type)) return { events: [event], dropped: null, error: null };
    let text;
    try {
      text = jsonText(event, 'an agent\'s activity event');
    } catch (error) {
      return { events: [], dropped: error.code ?? 'invalid-json', error };
    }
    const via = stream?.facade; // a run's stream: its client's first event of an activity is the snapshot
    let result = this.#callJson((f) => (via ? via.write(f, text, verified === true) : f.write(text, verified === true)));
    if (result.ok && result.kind === 'content' && typeof content === 'function') {
      const contentText = jsonText(content(result.messageId) ?? null, 'the verified activity content');
      result = this.#callJson((f) => (via ? via.writeContent(f, text, contentText) : f.writeContent(text, contentText)));
    }
    if (!result.ok) return { events: [], dropped: failureCode(result, 'invalid-json'), error: failureError(result, 'invalid-json', result.message) };
    if (result.kind === 'write') return { events: result.events, dropped: null, error: null };
    if (result.kind === 'pass') return { events: [event], dropped: null, error: null };
    const error = result.failure ? this.#refusal('the activity event', result.failure, 'patch-failed') : null;
    return { events: [], dropped: result.reason ?? 'patch-failed', error };
  }

  /** The content of `messageId` as clients reconstruct it (a fresh copy), or undefined when not held. */
  content(messageId) {
    const value = this.#callJson((f) => f.contentJson(messageIdOf(messageId, 'activities.content()')));
    return value === null ? undefined : value;
  }

  /** The seq of `messageId` on its own line, or null when not held. */
  seq(messageId) {
    const seq = this.#invoke((f) => f.seq(messageIdOf(messageId, 'activities.seq()')));
    return seq < 0 ? null : seq;
  }

  /** The epoch its activities count in (an activity created after one was forgotten: `<epoch>.<n>`). */
  get epoch() {
    this.#link.check();
    return this.#epoch;
  }

  /** How many activities are held (at most maxActivities). */
  get size() {
    return this.#invoke((f) => f.size());
  }

  /** "data: <JSON>\n\n": an activity event carries no SSE id (`id:` names the state's seq). */
  encode(event) {
    return `data: ${jsonText(event, 'encode() event')}\n\n`;
  }

  /** Frees the engine object. Idempotent; any other call afterwards throws. */
  dispose() {
    this.#link.release(this);
  }

  /**
   * @internal { activities: [{ messageId, mode }], events } for a client's
   * activity positions (`activities`: the array of forwardedProps.stateSync,
   * the X-AGUI-State-Activities value, or null: it keeps none).
   */
  [kActivityCatchUp](activities, stream) {
    if (activities === null || activities === undefined) return { activities: [], events: [] };
    const position = JSON.stringify({ activities });
    const via = stream?.facade;
    const result = this.#callJson((f) => (via ? via.catchUp(f, position) : f.catchUp(position)));
    return { activities: result.activities, events: result.events };
  }

  /** @internal a store-bound thread's (option record): the activity record's ops of what was written since */
  [kTakeRecordOps]() {
    return this.#callJson((f) => f.takeRecordOps());
  }

  /**
   * @internal what follows the record's answer to the ops last taken (`refusal`: null when stored,
   * else the store's refusal code): { next: 'done' | 'adopt' | 'raise' | 'fail', code?, message? }
   */
  [kSettleRecord](refusal) {
    return this.#callJson((f) => f.settleRecord(refusal ?? ''));
  }

  /** @internal ops were taken and not stored since the last adoption: adopt before the next write */
  [kRecordStale]() {
    return this.#invoke((f) => f.recordStale());
  }

  /** @internal every activity as an unsequenced ACTIVITY_SNAPSHOT, SSE text: a proxy run's upstream receiver starts from them */
  [kSeedText]() {
    return this.#invoke((f) => f.seedText());
  }

  /** @internal brings the activities to the stored activity record's JSON text (src/emit/activity_record.h) */
  [kAdoptRecord](recordText) {
    const result = this.#callJson((f) => f.adoptRecord(recordText));
    if (!result.ok) throw failureError(result, 'invalid-json', `the stored activity record is unreadable: ${result.message}`);
    return result.changed;
  }

  /**
   * @internal one run's stream of these activities (ActivityStreamFacade): pass
   * it to write() and catchUp(); dispose() it when the run ends.
   */
  [kActivityStream]() {
    this.#link.check();
    return new ActivityStream(EngineLink.create(this.#link.engine, 'ActivityStreamFacade', '{}', 'ActivityStream'));
  }

  #refusal(what, failure, fallback) {
    const code = failureCode(failure, fallback);
    return failureError(failure, fallback, `${what} refused (${code}): ${failure.message}; the activity is unchanged`);
  }

  #invoke(fn) {
    this.#link.check();
    return this.#link.invoke(fn);
  }

  #callJson(fn) {
    this.#link.check();
    return this.#link.callJson(fn);
  }
}
