// StateSync: the public object of agui-state-sync. It owns one C++ SyncFacade
// (through its EngineLink), moves chunks into the WASM heap as bytes, turns the
// facade's Result JSON into Outcome objects, keeps the JS state mirror
// (state-mirror.js) in step, and owns the approval guard (guard.js).
// Two states are mirrored (edits.h): the confirmed state (the agent's) and the
// visible state (confirmed + the user's pending edits; pending-edits.js). While
// no edit is pending they are the same object.
import { editText, engineRefusal } from './edit-input.js';
import { EngineLink } from '../engine/engine-link.js';
import { reportListenerError, syncTypeError } from '../engine/errors.js';
import { ApprovalGuard } from './guard.js';
import { loadEngine } from '../engine/loader.js';
import { guardOptions, syncOptions } from './sync-options.js';
import { applyDelta } from '../shared/state-mirror.js';
import { ActivityMirrors } from './activities.js';
import { kCheckpointMeta, kInternals, kLocalEdit, kPersist, kRestore } from '../engine/internals.js';
import { EditSteps, PendingEdits } from './pending-edits.js';
import { attachPersistence } from './persist.js';

// Chunks larger than this cross into the engine in slices, so the scratch
// buffer in the WASM heap stays small (the engine accepts any chunking).
const SLICE_BYTES = 1 << 20;

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

// The facade leaves each feed's Result in WASM memory as [uint32 LE length][UTF-8
// JSON] and returns its address: one TextDecoder call reads it (embind's own
// std::string return scans every byte in JS first).
function readResult(heap, ptr) {
  const length = (heap[ptr] | (heap[ptr + 1] << 8) | (heap[ptr + 2] << 16) | (heap[ptr + 3] << 24)) >>> 0;
  return textDecoder.decode(heap.subarray(ptr + 4, ptr + 4 + length));
}

function toBytes(chunk) {
  if (chunk instanceof Uint8Array) return chunk;
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer || Object.prototype.toString.call(chunk) === '[object ArrayBuffer]') {
    return new Uint8Array(chunk);
  }
  return null;
}

export class StateSync {
  #link; // the EngineLink: the facade, and every call into it
  #state; // the visible state
  #confirmed; // the agent's state (=== #state while no edit is pending)
  #edits = new PendingEdits();
  #maxEditBytes;
  #editListeners = new Set(); // kLocalEdit: StateSyncHttpAgent's agent.state
  #status = 'unverified';
  #lastSeq = null;
  #lastEventId = null;
  #resync = null;
  #listeners = new Set();
  #highSurrogate = ''; // a string chunk ended inside a surrogate pair: its first half
  #mirrorReloads = 0;
  #epoch = null;
  #now;
  #guard;
  #persist = null; // the checkpoint sink (persist.js), with createStateSync({ persist })
  #activities = new ActivityMirrors((messageId) => this.#reloadActivity(messageId));
  #keepsActivities;

  /** @internal use createStateSync() */
  constructor(link, initialState, { now, staleCheckMs } = guardOptions(undefined), maxEditBytes = 8 << 20, activities = false) {
    this.#link = link;
    this.#keepsActivities = activities;
    this.#state = initialState;
    this.#confirmed = initialState;
    this.#maxEditBytes = maxEditBytes;
    this.#now = now;
    this.#guard = new ApprovalGuard({
      link,
      state: () => this.#state,
      confirmed: () => this.#confirmed,
      editing: () => this.#edits.size > 0,
      activity: (messageId) => (Object.hasOwn(this.#activities.view, messageId) ? this.#activities.view[messageId] : undefined),
      now: () => Number(this.#now()),
      unusable: () => this.#unusableReason(),
    }, staleCheckMs);
    this.#absorb(link.invoke((f) => f.statusJson()), null);
    link.track(this);
  }

  /**
   * The approval guard: view/approve/watch a value, AG-UI interrupts. Usable
   * after dispose() too: it then refuses with reason 'disposed'.
   */
  get guard() {
    return this.#guard;
  }

  /**
   * The sender's epoch (metadata.epoch of the snapshot the state came from, as
   * a string), or null when unknown. Sent back on reconnect (X-AGUI-State-Epoch).
   */
  get epoch() {
    this.#check();
    return this.#epoch;
  }

  /**
   * The visible state as plain JSON data: the agent's state with the user's
   * pending edits on top. Never modified in place: treat it as read-only.
   */
  get state() {
    this.#check();
    return this.#state;
  }

  /**
   * With createStateSync({ activities: true }): the AG-UI activities the
   * engine holds (docs/wire.md section 11), by messageId: { messageId,
   * activityType, content, status, lastSeq, held, resync }. Immutable: a new
   * object when an activity changed, and within it every untouched activity,
   * and every subtree of a content a patch did not touch, keeps its identity.
   * `content` is the agent's verified content when `status` is 'synced'.
   */
  get activities() {
    this.#check();
    return this.#activities.view;
  }

  /**
   * With { activities: true }: where each activity is, as a reconnecting
   * client tells the server ([{ messageId, lastSeq, epoch, reason }],
   * forwardedProps.stateSync.activities / X-AGUI-State-Activities); null without.
   */
  activityPositions() {
    this.#check();
    return this.#keepsActivities ? this.#activities.positions() : null;
  }

  /** The agent's state (verified as of lastSeq), without pending edits. === state while none is pending. */
  get confirmedState() {
    this.#check();
    return this.#confirmed;
  }

  /**
   * A local edit: RFC 6902 `ops` (`test` allowed), applied atomically to the
   * visible state at once and kept pending until the agent acknowledges it.
   * Returns { ok: true, editId } or { ok: false, reason, code, message, opIndex? }
   * (reason === code: agent-owned, invalid-patch, patch-failed,
   * precondition-failed, limit-exceeded), and then nothing changed. Never
   * throws for `ops` (a non-array is 'invalid-patch'); throws only when the
   * StateSync is disposed or failed.
   */
  edit(ops) {
    this.#check();
    const { text, refusal } = editText(ops, this.#maxEditBytes);
    if (refusal) return refusal;
    const result = this.#link.callJson((f) => f.edit(text));
    if (!result.ok) return engineRefusal(result);
    const before = this.#snapshotForNotify();
    const parsed = JSON.parse(text); // exactly what the engine took (and the app cannot change afterwards)
    this.#edits.add(result.editId, this.#lastSeq, parsed);
    try {
      this.#state = applyDelta(this.#state, parsed);
    } catch {
      this.#reloadVisible(); // the engine applied it: its visible state is the truth
    }
    this.#persistIfMoved(before);
    // The agent's own state first (StateSyncHttpAgent), so subscribers that read it see the edit.
    this.#notifyEditListeners();
    this.#notifyIfChanged(before);
    this.#guard.refresh();
    return { ok: true, editId: result.editId };
  }

  /**
   * The edits the agent has not acknowledged yet, oldest first:
   * [{ editId, baseSeq, ops }] (frozen; the same array until the list changes).
   */
  pendingEdits() {
    this.#check();
    return this.#edits.list;
  }

  /**
   * What the next RunAgentInput needs, for transports other than
   * StateSyncHttpAgent (which sends it by itself): { state: the visible state,
   * forwardedProps: { stateSync: { edits } } }. Merge it into your input.
   */
  runInput() {
    this.#check();
    return { state: this.#state, forwardedProps: { stateSync: { edits: [...this.#edits.list] } } };
  }

  /** 'synced' | 'unverified' | 'resyncing' */
  get status() {
    this.#check();
    return this.#status;
  }

  get lastSeq() {
    this.#check();
    return this.#lastSeq;
  }

  get lastEventId() {
    this.#check();
    return this.#lastEventId;
  }

  /** null, or what to tell the server: { reason, lastSeq, lastEventId, held }. */
  resyncRequest() {
    this.#check();
    return this.#resync === null ? null : { ...this.#resync, held: [...(this.#resync.held ?? [])] };
  }

  /**
   * Feeds one chunk of the SSE byte stream (any chunking; Uint8Array or string).
   * Returns one Outcome per complete SSE event the chunk finished.
   */
  feed(chunk) {
    this.#check();
    const before = this.#snapshotForNotify();
    const outcomes = [];
    if (typeof chunk === 'string') {
      if (chunk.length > 0) this.#noteActivity();
      this.#feedString(chunk, outcomes);
    } else {
      const bytes = toBytes(chunk);
      if (bytes === null) throw syncTypeError('invalid-argument', 'feed() takes a Uint8Array or a string');
      if (bytes.length > 0) this.#noteActivity();
      if (this.#highSurrogate) this.#flushHighSurrogate(outcomes);
      this.#feedBytes(bytes, outcomes);
    }
    this.#persistIfMoved(before);
    this.#notifyIfChanged(before);
    this.#guard.refresh();
    return outcomes;
  }

  /** The byte stream ended or broke: a partial event is dropped, a pending gap becomes a resync. */
  end() {
    this.#check();
    const before = this.#snapshotForNotify();
    const outcomes = [];
    if (this.#highSurrogate) this.#flushHighSurrogate(outcomes);
    this.#absorb(this.#link.invoke((f) => f.end()), outcomes);
    this.#persistIfMoved(before);
    this.#notifyIfChanged(before);
    this.#guard.refresh();
    return outcomes;
  }

  /** A new connection starts: framing restarts; state, lastSeq and lastEventId are kept. */
  reset() {
    this.#check();
    this.#highSurrogate = '';
    this.#link.invoke((f) => f.reset());
    this.#guard.refresh();
  }

  /** Engine counters and byte totals (from C++), taxRate, and mirrorReloads (JS). */
  metrics() {
    this.#check();
    const metrics = this.#link.callJson((f) => f.metricsJson());
    if (typeof metrics.taxRate !== 'number') {
      metrics.taxRate = metrics.deltasApplied > 0 ? metrics.resyncs / metrics.deltasApplied : 0;
    }
    metrics.mirrorReloads = this.#mirrorReloads;
    return metrics;
  }

  /**
   * Calls `listener()` once after each feed()/end()/edit() call that changed the
   * visible state, the status or the pending edits (once per call, however
   * many events it carried). Returns the
   * unsubscribe function. A listener that throws is reported, never rethrown.
   */
  subscribe(listener) {
    this.#check();
    if (typeof listener !== 'function') throw syncTypeError('invalid-argument', 'subscribe() takes a function');
    const entry = { listener };
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /**
   * With createStateSync({ persist }): what the restore found and how writing
   * goes ({ key, restore, active, inactiveReason, error, outcomes, writes,
   * coalesced, failures, storageError, behind }; a copy). null without persist. Usable
   * after dispose().
   */
  get persistence() {
    return this.#persist === null ? null : this.#persist.info;
  }

  /**
   * Resolves once nothing is being written: the newest checkpoint is stored
   * (persistence.behind is false), or its last attempt failed (behind stays
   * true, persistence.storageError says why, and it is retried later).
   * Resolves at once without persist. After dispose(): once the write that was
   * in flight has ended.
   */
  flush() {
    return this.#persist === null ? Promise.resolve() : this.#persist.flush();
  }

  /** Frees the engine and stops writing checkpoints. Idempotent; any other call afterwards throws. */
  dispose() {
    if (this.#link.released) return;
    if (this.#persist !== null) this.#persist.stop();
    this.#listeners.clear();
    this.#editListeners.clear();
    this.#guard.dispose();
    this.#state = undefined;
    this.#confirmed = undefined;
    this.#link.release(this);
  }

  /** @internal test hooks (not part of the public API) */
  [kInternals]() {
    const link = this.#link;
    return { engine: link.engine, facade: link.facade, call: (fn) => link.invoke(() => fn()) };
  }

  /** @internal persist.js: installs the checkpoint sink; `writeNow`: offer the current checkpoint at once. */
  [kPersist](sink, writeNow = false) {
    this.#persist = sink;
    if (writeNow) sink.changed(this.#checkpointView());
  }

  /**
   * @internal persist.js: restores a checkpoint (`body`: its JSON text, as
   * SyncFacade.restore takes it; `checkpoint`: the same, parsed). Returns
   * { outcomes } (the 'restored' resync first), or { failure } (the facade's
   * {ok:false, code, message}: nothing changed).
   */
  [kRestore](body, checkpoint) {
    this.#check();
    const result = this.#link.parse(this.#link.invoke((f) => f.restore(body)));
    if (result.ok === false) return { failure: result };
    // The engine took the text the mirrors are parsed from: they start from it.
    this.#confirmed = checkpoint.state;
    this.#edits.reload(this.#link.callJson((f) => f.pendingEditsJson()));
    try {
      this.#state = this.#edits.replay(this.#confirmed);
    } catch {
      this.#reloadVisible();
    }
    const outcomes = [];
    this.#absorb(JSON.stringify(result), outcomes);
    this.#guard.refresh();
    return { outcomes };
  }

  /** @internal persist.js: { clientId, editCounter, lastEventId } from the engine. */
  [kCheckpointMeta]() {
    return this.#link.callJson((f) => f.checkpointMetaJson());
  }

  /** @internal `listener()` after each successful edit() (StateSyncHttpAgent keeps agent.state with it). */
  [kLocalEdit](listener) {
    const entry = () => listener();
    this.#editListeners.add(entry);
    return () => this.#editListeners.delete(entry);
  }

  // --- internals ---------------------------------------------------------------

  // Why the guard cannot answer (it never throws for that): 'disposed', 'engine-failed', or null.
  #unusableReason() {
    if (this.#link.released) return 'disposed';
    if (this.#link.failed) return 'engine-failed';
    return null;
  }

  #noteActivity() {
    const now = Number(this.#now());
    this.#link.invoke((f) => f.noteActivity(now));
  }

  // Throws 'disposed' or 'engine-failed' when the StateSync cannot be used. Every
  // call into the engine goes through the EngineLink: anything it throws (an
  // abort's RuntimeError, a trap, a number from a stray C++ throw) kills the
  // instance and every StateSync sharing the engine ('engine-failed').
  #check() {
    this.#link.check();
  }

  #feedBytes(bytes, outcomes) {
    const engine = this.#link.engine;
    for (let offset = 0; offset < bytes.length; offset += SLICE_BYTES) {
      const slice = bytes.subarray(offset, Math.min(bytes.length, offset + SLICE_BYTES));
      const result = this.#link.invoke((facade) => {
        const ptr = facade.inputBuffer(slice.length);
        engine.heapU8.set(slice, ptr); // heapU8 re-read: inputBuffer may have grown memory
        const result = facade.feedInput(slice.length);
        return readResult(engine.heapU8, result); // re-read again: feeding may have grown it
      });
      this.#absorb(result, outcomes);
    }
  }

  #feedString(text, outcomes) {
    const engine = this.#link.engine;
    // A surrogate pair split across two string chunks is joined, so that string
    // chunking is as lossless as byte chunking.
    let rest = this.#highSurrogate + text;
    this.#highSurrogate = '';
    const last = rest.charCodeAt(rest.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.#highSurrogate = rest.slice(-1);
      rest = rest.slice(0, -1);
    }
    while (rest.length > 0) {
      // UTF-16 -> UTF-8 is at most 3 bytes per code unit; encodeInto never splits a surrogate pair.
      const capacity = Math.min(SLICE_BYTES, rest.length * 3);
      let read = 0;
      const result = this.#link.invoke((facade) => {
        const ptr = facade.inputBuffer(capacity);
        const stats = textEncoder.encodeInto(rest, engine.heapU8.subarray(ptr, ptr + capacity));
        read = stats.read;
        const result = facade.feedInput(stats.written);
        return readResult(engine.heapU8, result); // heapU8 read after the call: memory may have grown
      });
      this.#absorb(result, outcomes);
      rest = read >= rest.length ? '' : rest.slice(read);
    }
  }

  #flushHighSurrogate(outcomes) {
    this.#highSurrogate = '';
    this.#feedBytes(new Uint8Array([0xef, 0xbf, 0xbd]), outcomes); // a lone surrogate encodes as U+FFFD
  }

  // Turns one facade Result into outcomes and updates the mirrors.
  #absorb(resultJson, outcomes) {
    const result = this.#link.parse(resultJson);
    const confirmedBefore = this.#confirmed;
    const steps = this.#edits.size > 0 ? new EditSteps(this.#edits.list) : null;
    let unmirrored = null; // applied outcomes whose state the mirror could not compute
    for (const raw of result.outcomes) {
      if (raw.messageId !== undefined) { // an activity's (its own line; never the state's)
        if (raw.kind === 'applied') this.#activities.applied(raw);
        outcomes.push(raw);
        continue;
      }
      if (raw.kind !== 'applied') {
        if (raw.kind === 'event') this.#guard.noteEvent(raw.event);
        else if (steps !== null) steps.note(raw);
        outcomes.push(raw);
        continue;
      }
      // The parsed outcome becomes the public one: { kind, type, seq, changedPaths, event, state }.
      const outcome = raw;
      const event = raw.event;
      outcome.state = undefined;
      if (unmirrored === null) {
        try {
          this.#confirmed = raw.type === 'STATE_SNAPSHOT' ? event.snapshot : applyDelta(this.#confirmed, event.delta);
          outcome.state = this.#confirmed;
          if (steps !== null) steps.applied(outcome);
        } catch {
          unmirrored = [];
        }
      }
      if (unmirrored !== null) unmirrored.push(outcome);
      outcomes.push(outcome);
    }
    if (unmirrored !== null) this.#reloadConfirmed();
    this.#settleEdits(result.edits, this.#confirmed !== confirmedBefore);
    if (steps !== null) steps.finish(this.#state, this.#edits);
    if (unmirrored !== null) for (const outcome of unmirrored) outcome.state = this.#state;
    this.#activities.settle(result.activities);
    this.#status = result.status;
    this.#lastSeq = result.lastSeq;
    this.#lastEventId = result.lastEventId;
    this.#resync = result.resync;
    this.#epoch = result.epoch; // kept by C++ as text: a numeric epoch beyond 2^53 keeps its digits
  }

  // Should never happen (the engine only reports deltas that apply): re-read
  // the truth from C++ rather than drift.
  #reloadConfirmed() {
    this.#mirrorReloads++;
    this.#confirmed = this.#link.callJson((f) => f.stateJson());
  }

  // The same for one activity's content.
  #reloadActivity(messageId) {
    this.#mirrorReloads++;
    return this.#link.callJson((f) => f.activityJson(messageId));
  }

  // The same for the visible state (an edit the engine applied that the mirror could not replay).
  #reloadVisible() {
    this.#mirrorReloads++;
    this.#state = this.#link.callJson((f) => f.visibleStateJson());
  }

  // The pending edits as the Result reports them, and the visible state from
  // them: the confirmed state itself when none is pending, else rebuilt when
  // the confirmed state or the edits changed (O(pending edits)).
  #settleEdits(engineEdits, confirmedChanged) {
    let change = this.#edits.update(engineEdits);
    if (change === 'unknown') {
      this.#mirrorReloads++;
      this.#edits.reload(this.#link.callJson((f) => f.pendingEditsJson()));
      change = 'changed';
    }
    if (this.#edits.size === 0) {
      this.#state = this.#confirmed;
      return;
    }
    if (!confirmedChanged && change === 'same') return;
    try {
      this.#state = this.#edits.replay(this.#confirmed);
    } catch {
      this.#reloadVisible();
    }
  }

  #notifyEditListeners() {
    for (const listener of [...this.#editListeners]) {
      try {
        listener();
      } catch (error) {
        reportListenerError(error, 'a local-edit listener');
      }
    }
  }

  // What feed()/end()/edit() compare after the call, for subscribers and for checkpoints (O(1)).
  #snapshotForNotify() {
    return {
      state: this.#state, status: this.#status, edits: this.#edits.list, activities: this.#activities.view,
      confirmed: this.#confirmed, lastSeq: this.#lastSeq, epoch: this.#epoch, lastEventId: this.#lastEventId,
    };
  }

  // What a checkpoint holds, as references (the state is never changed in
  // place, the pending list is frozen): the writer serializes it later, off the hot path.
  #checkpointView() {
    return { state: this.#confirmed, lastSeq: this.#lastSeq, epoch: this.#epoch, lastEventId: this.#lastEventId, edits: this.#edits.list };
  }

  // One checkpoint per call that moved its content.
  #persistIfMoved(before) {
    if (this.#persist === null) return;
    if (this.#confirmed === before.confirmed && this.#lastSeq === before.lastSeq && this.#epoch === before.epoch
      && this.#lastEventId === before.lastEventId && this.#edits.list === before.edits) return;
    this.#persist.changed(this.#checkpointView());
  }

  #notifyIfChanged(before) {
    if (this.#state === before.state && this.#status === before.status && this.#edits.list === before.edits &&
      this.#activities.view === before.activities) return;
    for (const entry of [...this.#listeners]) {
      if (!this.#listeners.has(entry)) continue; // unsubscribed by an earlier listener
      try {
        entry.listener();
      } catch (error) {
        reportListenerError(error, 'a subscribe() listener');
      }
    }
  }
}

/**
 * Loads the WebAssembly engine (once) and creates a StateSync; with `persist`,
 * restored from its last checkpoint (persist.js) before it is returned.
 * @param {object} [options] reorderWindow, reorderBytes, maxGapEvents, maxEventBytes,
 *   maxDepth, maxStateBytes, initialState, wasmBinary, locateFile; guard: staleAfterMs,
 *   trustUnsequenced, now, staleCheckMs; edits: ownership, onConflict, clientId;
 *   persist: { key, storage, lock, lockTimeoutMs }
 */
export async function createStateSync(options) {
  const { json, initialState, guard, maxEditBytes, persist } = syncOptions(options);
  const engine = await loadEngine(options ?? {});
  const link = EngineLink.create(engine, 'SyncFacade', json, 'StateSync');
  const sync = new StateSync(link, initialState, guard, maxEditBytes, options?.activities === true);
  if (persist !== null) {
    try {
      await attachPersistence(sync, persist);
    } catch (error) {
      sync.dispose();
      throw error;
    }
  }
  return sync;
}
