// The JS side of the engine's pending-edit layer (src/edit/edit_layer.h).
//
// The engine decides everything about edits (ownership, conflicts, acks, which
// edits still apply); this file only keeps the JS copies in step with it:
//  - PendingEdits: the edits the engine reports pending (Result.edits), with
//    the ops the app passed, oldest first, and which of them the engine skips
//    (applies:false);
//  - the visible state, rebuilt as the confirmed state with the applying edits'
//    ops replayed through the structural-sharing mirror (state-mirror.js):
//    O(pending edits) per feed while edits are pending, never a copy of the state;
//  - EditSteps: the visible state after each applied outcome of one feed, for
//    outcome.state (the state after that event, as the app would have seen it).
import { parsePointer } from '../shared/json-pointer.js';
import { applyDelta, getAt } from '../shared/state-mirror.js';

const EMPTY = Object.freeze([]);
const hasOwn = Object.prototype.hasOwnProperty;

// An edit is no longer pending after one of these (edits.h): its ack, its
// rejection, or a conflict the agent won. A user-wins conflict keeps it pending.
function settles(outcome) {
  if (outcome.kind === 'edit-acked' || outcome.kind === 'edit-rejected') return true;
  return outcome.kind === 'conflict' && outcome.resolution !== 'user-wins';
}

// Freezes a JSON value without recursion (an edit may nest as deep as maxDepth
// allows): the stored ops are handed out by pendingEdits() and shared with the
// visible state, so nobody may change them in place.
export function deepFreeze(value) {
  const stack = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object' || Object.isFrozen(node)) continue;
    Object.freeze(node);
    for (const key of Object.keys(node)) stack.push(node[key]);
  }
  return value;
}

// RFC 6902 equality of two JSON values (object key order does not matter).
function jsonEqual(a, b) {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => hasOwn.call(b, key) && jsonEqual(a[key], b[key]));
}

// `ops` applied to `state` if every op applies (`test` included: the mirror
// skips tests, since the engine checked them), else null. Only for states the
// engine never judged (the intermediate states of one feed).
function tryApply(state, ops) {
  try {
    let next = state;
    for (const op of ops) {
      if (op.op === 'test') {
        if (!jsonEqual(getAt(next, parsePointer(op.path)), op.value)) return null;
      } else next = applyDelta(next, [op]);
    }
    return next;
  } catch {
    return null;
  }
}

export class PendingEdits {
  #list = EMPTY; // frozen [{ editId, baseSeq, ops }], oldest first: what pendingEdits() returns
  #skipped = new Set(); // editIds the engine reports as applies:false

  /** The pending edits, oldest first: a frozen array, the same object until the list changes. */
  get list() {
    return this.#list;
  }

  get size() {
    return this.#list.length;
  }

  /** True when the engine skips `editId` in the visible state (it no longer applies). */
  skips(editId) {
    return this.#skipped.has(editId);
  }

  /** A new edit the engine accepted (it applies to the visible state). `ops` is frozen here. */
  add(editId, baseSeq, ops) {
    const entry = Object.freeze({ editId, baseSeq, ops: deepFreeze(ops) });
    this.#list = Object.freeze([...this.#list, entry]);
  }

  /**
   * Takes a Result's `edits` ([{ editId, applies }], undefined when none is
   * pending). Returns 'changed', 'same', or 'unknown' when it names an edit
   * this list does not hold (then nothing changed here: reload()).
   */
  update(engineEdits) {
    if (engineEdits === undefined || engineEdits.length === 0) {
      if (this.#list.length === 0) return 'same';
      this.#list = EMPTY;
      this.#skipped = new Set();
      return 'changed';
    }
    const byId = new Map(this.#list.map((entry) => [entry.editId, entry]));
    const next = [];
    const skipped = new Set();
    for (const { editId, applies } of engineEdits) {
      const entry = byId.get(editId);
      if (entry === undefined) return 'unknown';
      next.push(entry);
      if (!applies) skipped.add(editId);
    }
    const sameList = next.length === this.#list.length && next.every((entry, i) => entry === this.#list[i]);
    const sameSkips = skipped.size === this.#skipped.size && [...skipped].every((id) => this.#skipped.has(id));
    if (!sameList) this.#list = Object.freeze(next);
    this.#skipped = skipped;
    return sameList && sameSkips ? 'same' : 'changed';
  }

  /** Replaces the list with the engine's own (SyncFacade.pendingEditsJson(), parsed). */
  reload(engineList) {
    this.#list = Object.freeze(engineList.map(({ editId, baseSeq, ops }) => Object.freeze({ editId, baseSeq, ops: deepFreeze(ops) })));
    this.#skipped = new Set(engineList.filter((entry) => !entry.applies).map((entry) => entry.editId));
  }

  /**
   * The visible state: `confirmed` with every edit the engine applies replayed
   * in order (structural sharing: untouched subtrees keep their identity).
   * Throws if one does not apply, which the engine rules out (the caller then
   * re-reads the engine's visible state).
   */
  replay(confirmed) {
    let state = confirmed;
    for (const entry of this.#list) {
      if (!this.#skipped.has(entry.editId)) state = applyDelta(state, entry.ops);
    }
    return state;
  }
}

/**
 * The visible state after each applied outcome of one feed. The engine reports
 * the pending edits (and which apply) only as of the end of the feed; an edit
 * settled by a later outcome of the same feed was still pending after the
 * earlier ones, so those states replay it where it applies. The last applied
 * outcome's state is the final visible state itself.
 */
export class EditSteps {
  #before; // the pending list when the feed started
  #live; // editIds still pending at this point of the outcome list
  #records = []; // [{ outcome, live }]: outcome.state holds the confirmed state after it, until finish()

  constructor(list) {
    this.#before = list;
    this.#live = new Set(list.map((entry) => entry.editId));
  }

  /** An outcome other than 'applied', in order. */
  note(outcome) {
    if (settles(outcome)) this.#live.delete(outcome.editId);
  }

  /** An applied outcome whose `state` is the confirmed state after it. */
  applied(outcome) {
    const last = this.#records.at(-1);
    if (last) last.live = new Set(this.#live);
    this.#records.push({ outcome, live: null });
  }

  /** Sets every recorded outcome's `state` to the visible state after it (`pending`: the final PendingEdits). */
  finish(visible, pending) {
    for (const { outcome, live } of this.#records) {
      if (live === null) {
        outcome.state = visible;
        continue;
      }
      let state = outcome.state;
      for (const entry of this.#before) {
        if (!live.has(entry.editId) || pending.skips(entry.editId)) continue;
        state = tryApply(state, entry.ops) ?? state;
      }
      outcome.state = state;
    }
  }
}
