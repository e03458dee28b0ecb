// A StateSync's activities (AG-UI 1.0 ACTIVITY_SNAPSHOT / ACTIVITY_DELTA;
// docs/wire.md section 11) as immutable mirrors, with createStateSync({
// activities: true }). The C++ engine decides everything (sequencing, patches,
// resyncs, limits); this only follows its applied outcomes, as the state's
// mirror does: a snapshot's content, or a delta's patch replayed over the
// previous mirror (shared/state-mirror.js), so every subtree a patch does not
// touch keeps its identity. Status and position come from the Result.
import { applyDelta } from '../shared/state-mirror.js';

const EMPTY = Object.freeze({});

export class ActivityMirrors {
  #view = EMPTY; // messageId -> frozen { messageId, activityType, content, status, lastSeq, held, resync }
  #contents = new Map(); // messageId -> content mirror
  #reload;

  /** `reload(messageId)`: the engine's content of that activity (when a mirror cannot follow). */
  constructor(reload) {
    this.#reload = reload;
  }

  /** The activities, by messageId: a new object whenever one changed, the same otherwise. */
  get view() {
    return this.#view;
  }

  /**
   * Where each activity is, for a catch-up (docs/wire.md section 11):
   * [{ messageId, lastSeq, epoch, reason }] (reason: its resync's, else null).
   */
  positions() {
    return Object.values(this.#view).map((a) => ({
      messageId: a.messageId, lastSeq: a.lastSeq, epoch: a.epoch ?? null, reason: a.resync?.reason ?? null,
    }));
  }

  /** An applied activity outcome: its content mirror moves on, and the outcome gets it as `content`. */
  applied(outcome) {
    const { messageId, event } = outcome;
    let content;
    try {
      content = outcome.type === 'ACTIVITY_SNAPSHOT' ? event.content : applyDelta(this.#contents.get(messageId) ?? EMPTY, event.patch);
    } catch {
      content = this.#reload(messageId); // never expected: the engine reports only patches that apply
    }
    this.#contents.set(messageId, content);
    outcome.content = content;
  }

  /** The Result's `activities` list (present when an outcome named one): the view, rebuilt in O(activities). */
  settle(list) {
    if (!Array.isArray(list)) return;
    const next = {};
    let changed = Object.keys(this.#view).length !== list.length;
    for (const a of list) {
      const before = this.#view[a.messageId];
      const content = this.#contents.get(a.messageId) ?? EMPTY;
      const same = before !== undefined && before.content === content && before.status === a.status &&
        before.lastSeq === a.lastSeq && before.held === a.held && before.activityType === a.activityType &&
        (before.resync?.reason ?? null) === (a.resync?.reason ?? null);
      const entry = same ? before : Object.freeze({ ...a, content, resync: a.resync === null ? null : Object.freeze(a.resync) });
      // Any messageId is a key, "__proto__" too: defined, never assigned.
      Object.defineProperty(next, a.messageId, { value: entry, writable: true, enumerable: true, configurable: true });
      changed = changed || !same;
    }
    if (changed) this.#view = Object.freeze(next);
  }
}
