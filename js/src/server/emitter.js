// StateEmitter: the sender half (include/agui_sync/state_emitter.h) for Node
// servers (or any JS host). It owns one C++ EmitterFacade in the agui_emitter
// module (through its EngineLink): the app hands it whole new states (diffed
// in C++) or its own RFC 6902 ops, and gets back sequenced, digest-stamped
// @ag-ui/core events, SSE-encoded on request, plus a replay buffer for clients
// that missed some (server.js: catchUp).
import { checkEditPolicy } from '../shared/edit-policy.js';
import { EngineLink } from '../engine/engine-link.js';
import { failureCode, failureError, syncTypeError } from '../engine/errors.js';
import { kActivitiesInUse, kCatchUp, kCatchUpEncoded, kCatchUpSnapshot, kInternals, kRenderPrompt, kStateText, kWriteThrough } from '../engine/internals.js';
import { loadModule } from '../engine/loader.js';
import { ActivityEmitter } from './activity-emitter.js';
import { kUpdateRebased } from './activity-internals.js';
import { activityOptions, emitterOptions } from './emitter-options.js';
import { messageOf, promptOptionsJson, renderedParts } from './prompt.js';
import { jsonText } from '../engine/options.js';
import { wireSeq } from '../engine/wire-meta.js';

// The sender's WebAssembly module; its glue is imported on first use only.
const EMITTER_MODULE = {
  wasmFile: 'agui_emitter.wasm',
  factory: async () => (await import('../../wasm/agui_emitter.mjs')).default,
};

const isActivityEvent = (event) => event?.type === 'ACTIVITY_SNAPSHOT' || event?.type === 'ACTIVITY_DELTA';

// The AguiSyncError for a refused update/patch/applyEdits (the facade's failure: code, message, opIndex).
function refusal(what, failure, fallback) {
  const message = `${what} refused (${failureCode(failure, fallback)}): ${failure.message}; the state is unchanged`;
  return failureError(failure, fallback, message);
}

export class StateEmitter {
  #link; // the EngineLink: the facade, and every call into it
  #epoch;
  #state = undefined; // parsed on demand, until the next change
  #stateValid = false;
  #activityOptions; // the ActivityFacade's options (activityOptions())
  #activities = null; // created on first use
  #version = 0; // bumped by every write: an encoded catch-up is kept only while it stands
  #encoded = null; // { key, version, mode, text, eventsJson }: the last catch-up writeCatchUp() wrote
  #encodedHits = { replay: 0, snapshot: 0 }; // answered from #encoded: counted in stats() as the core counts them

  /** @internal use createStateEmitter() */
  constructor(link, activityOptionsObject = {}) {
    this.#link = link;
    this.#epoch = this.#invoke((f) => f.epoch());
    this.#activityOptions = activityOptionsObject;
    link.track(this);
  }

  /**
   * The thread's AG-UI activities (ACTIVITY_SNAPSHOT / ACTIVITY_DELTA; docs/wire.md
   * section 11), each messageId sequenced on its own line, in this emitter's
   * epoch: an ActivityEmitter, created on first use. catchUp() answers a
   * client's activity positions from it.
   */
  get activities() {
    this.#check();
    this.#activities ??= ActivityEmitter.create(this.#link.engine, JSON.stringify({ ...this.#activityOptions, epoch: this.#epoch }));
    return this.#activities;
  }

  /** @internal the ActivityEmitter if one was created, else null (catchUp() then has nothing to answer for). */
  [kActivitiesInUse]() {
    return this.#activities;
  }

  /**
   * Diffs the current state against `newState` and returns the events to send
   * (one STATE_DELTA, or a STATE_SNAPSHOT when that is smaller; [] when nothing
   * changed). Throws an AguiSyncError with `code` if the state cannot be sent
   * (e.g. 'limit-exceeded' for nesting deeper than maxDepth); the state is then unchanged.
   */
  update(newState) {
    this.#check();
    this.#version++;
    const text = jsonText(newState, 'update() state');
    const result = this.#callJson((f) => f.update(text));
    if (!result.ok) throw refusal('update()', result, 'invalid-json');
    if (result.events.length) this.#stateValid = false;
    return result.events;
  }

  /** @internal update() by this writer's change from `fromText` (the state it last gave) to `toText` only (durable-emitter.js). */
  [kUpdateRebased](fromText, toText) {
    this.#check();
    this.#version++;
    const result = this.#callJson((f) => f.updateRebased(fromText, toText));
    if (!result.ok) throw refusal('update()', result, 'invalid-json');
    if (result.events.length) this.#stateValid = false;
    return result.events;
  }

  /**
   * Applies the app's RFC 6902 operations atomically and returns the events
   * that carry exactly them. Throws an AguiSyncError with `code` ('invalid-patch',
   * 'patch-failed', 'precondition-failed', 'limit-exceeded') and `opIndex` if
   * the patch does not apply; the state is then unchanged.
   */
  patch(ops) {
    this.#check();
    this.#version++;
    const text = jsonText(ops, 'patch() operations');
    const result = this.#callJson((f) => f.patch(text));
    if (!result.ok) throw refusal('patch()', result, 'patch-failed');
    if (result.events.length) this.#stateValid = false;
    return result.events;
  }

  /**
   * Judges a client's edits ([{ editId, baseSeq, ops }], as they travel in
   * RunAgentInput.forwardedProps.stateSync.edits; docs/wire.md section 9)
   * under `policy` ({ ownership, onConflict }, both optional) and applies the
   * ones it accepts: { events, results }. `results` holds one verdict per edit,
   * { editId, status: 'applied' | 'rejected', reason?, seq }, grouped by editId
   * origin like the events (one per origin, possibly an empty delta), which
   * carry the same verdicts in metadata.acks. An edit's own problems (a bad op, a failing
   * `test`, an agent-owned path, a conflict) are its verdict, never a throw.
   * Throws an AguiSyncError when the call cannot be judged at all, and then
   * nothing is applied: 'invalid-request' (not an array of { editId, baseSeq?,
   * ops }), 'invalid-options' (the policy), 'limit-exceeded' (nested deeper
   * than maxDepth), 'seq-exhausted'. `epoch`: the epoch the client's baseSeqs
   * count in (null: this emitter's); the engine judges another epoch's edits
   * as made at its first seq.
   */
  applyEdits(edits, policy, { epoch = null } = {}) {
    this.#check();
    this.#version++;
    if (!Array.isArray(edits)) throw syncTypeError('invalid-request', 'applyEdits() edits must be an array of { editId, baseSeq, ops }');
    if (epoch !== null && typeof epoch !== 'string') throw syncTypeError('invalid-request', 'applyEdits() epoch must be a string or null');
    const policyText = JSON.stringify(checkEditPolicy(policy, 'applyEdits() policy'));
    const text = jsonText(edits, 'applyEdits() edits', 'invalid-request');
    const result = this.#callJson((f) => f.applyEdits(text, policyText, JSON.stringify(epoch)));
    if (!result.ok) throw refusal('applyEdits()', result, 'invalid-request');
    if (result.events.length) this.#stateValid = false;
    return { events: result.events, results: result.results };
  }

  /**
   * Continues a log that another process wrote (a restart, or another instance
   * sharing a store; store/durable-emitter.js): create this emitter with the
   * stored state, startSeq and epoch, then pass the log's latest events,
   * oldest first, the last at `seq`. They become the replay ring and the edit
   * ledger (verdicts, change log, provenance) as if this emitter had sent
   * them. Events that do not end a consecutive run at `seq` are left out;
   * returns how many were adopted. Throws 'invalid-argument' for a non-array,
   * the facade's code ('limit-exceeded', ...) for events it cannot read.
   */
  adoptHistory(events) {
    this.#check();
    this.#version++;
    if (!Array.isArray(events)) throw syncTypeError('invalid-argument', 'adoptHistory() events must be an array of events');
    const result = this.#callJson((f) => f.adoptHistory(jsonText(events, 'adoptHistory() events')));
    if (!result.ok) throw failureError(result, 'invalid-request', `adoptHistory() refused: ${result.message}`);
    return result.adopted;
  }

  /**
   * Where the state holds what users wrote: [{ path, writer: 'client', origin,
   * seq }] for every pointer a client edit wrote last (an agent write at or
   * above it takes it back), sorted, at most 1,024. Pass the paths to
   * renderStateForPrompt / promptMessage as `userWritten` with untrusted: 'auto'.
   */
  provenance() {
    this.#check();
    return this.#callJson((f) => f.provenanceJson());
  }

  /** A STATE_SNAPSHOT of the current state at the current seq (digest-stamped). */
  snapshot() {
    this.#check();
    return this.#callJson((f) => f.snapshot());
  }

  /**
   * What a client at `seq` needs to be current: [] when it is, the missed
   * deltas exactly as first sent, or one snapshot (too old, future seq, replay
   * costlier than a snapshot, or `epoch` given and not ours; '' is an epoch
   * like any other). `held`: seqs the client already holds (resync.held); a
   * replay leaves those out, except the first missed delta.
   */
  replaySince(seq, epoch, held) {
    this.#check();
    if (!Number.isSafeInteger(seq) || seq < 0) throw syncTypeError('invalid-argument', 'replaySince() seq must be an integer >= 0');
    if (epoch !== undefined && epoch !== null && typeof epoch !== 'string') {
      throw syncTypeError('invalid-argument', 'replaySince() epoch must be a string');
    }
    const skip = held ?? [];
    if (!Array.isArray(skip) || !skip.every((s) => Number.isSafeInteger(s) && s >= 0)) {
      throw syncTypeError('invalid-argument', 'replaySince() held must be an array of integers >= 0');
    }
    return this.#replay(JSON.stringify({ seq, epoch: epoch ?? null, skip }), 'replaySince()');
  }

  /**
   * "id: <seq>\ndata: <JSON>\n\n" (no id line when `id` is false, the event has
   * no wire seq, or it is an activity's: `id:` names the state's seq).
   */
  encode(event, { id = true } = {}) {
    const data = jsonText(event, 'encode() event');
    const seq = isActivityEvent(event) ? undefined : wireSeq(event);
    const idLine = id && Number.isSafeInteger(seq) && seq >= 0 ? `id: ${seq}\n` : '';
    return `${idLine}data: ${data}\n\n`;
  }

  /**
   * renderStateForPrompt of this emitter's state, rendered in the engine where
   * the state is: no JSON text of it is written or read. { text, bytes,
   * truncated, untrustedPaths }. With untrusted: 'auto', userWritten defaults
   * to provenance()'s paths. Throws as renderStateForPrompt does.
   */
  renderStateForPrompt(options) {
    const what = 'emitter.renderStateForPrompt()';
    const { preamble, ...rendered } = this[kRenderPrompt](promptOptionsJson(options, what), what);
    return rendered;
  }

  /** promptMessage of this emitter's state, rendered where the state is (as renderStateForPrompt above). */
  promptMessage(options) {
    const what = 'emitter.promptMessage()';
    return messageOf(this[kRenderPrompt](promptOptionsJson(options, what), what));
  }

  /** @internal the render with options already as JSON text (promptOptionsJson): with its preamble. */
  [kRenderPrompt](optionsJson, what) {
    this.#check();
    return renderedParts(this.#link, this.#invoke((f) => f.renderPrompt(optionsJson)), what);
  }

  /** The SSE heartbeat comment ": hb <seq>\n\n". */
  heartbeat() {
    this.#check();
    return this.#invoke((f) => f.heartbeat());
  }

  /** The seq of the current state. */
  get seq() {
    this.#check();
    return this.#invoke((f) => f.seq());
  }

  /** The epoch stamped on every event (options.epoch, or a random id). */
  get epoch() {
    this.#check();
    return this.#epoch;
  }

  /** The current state (as receivers reconstruct it), parsed once per change. Treat it as read-only. */
  get state() {
    this.#check();
    if (!this.#stateValid) {
      this.#state = this.#callJson((f) => f.stateJson());
      this.#stateValid = true;
    }
    return this.#state;
  }

  /** @internal snapshot() as a catch-up's answer, counted in stats().replaySnapshots (used by catchUp()). */
  /** @internal { mode, events } for a client at `position` ({ lastSeq, epoch, reason, held }): the core decides. */
  [kCatchUp](position) {
    this.#check();
    const result = this.#callJson((f) => f.catchUp(JSON.stringify(position)));
    if (!result.ok) throw failureError(result, 'invalid-request', `catchUp() failed: ${result.message}`);
    return { mode: result.mode, events: result.events };
  }

  /**
   * @internal [kCatchUp]'s answer SSE-encoded, for writeCatchUp(): { mode, text, eventsJson }.
   * The answer is the core's; while no write came, the same position gets the
   * same bytes from memory (a fan-out's clients connect at one seq: one answer
   * parsed and encoded, not one per client). `position` holds nothing held.
   */
  [kCatchUpEncoded](position) {
    this.#check();
    const key = JSON.stringify(position);
    const kept = this.#encoded;
    if (kept !== null && kept.key === key && kept.version === this.#version) {
      if (kept.mode !== 'current') this.#encodedHits[kept.mode]++;
      return kept;
    }
    const { mode, events } = this[kCatchUp](position);
    const text = events.map((event) => this.encode(event)).join('');
    this.#encoded = { key, version: this.#version, mode, text, eventsJson: JSON.stringify(events) };
    return this.#encoded;
  }

  [kCatchUpSnapshot]() {
    this.#check();
    return this.#replay('{"snapshot":true}', 'catchUp()')[0];
  }

  /** Counters: deltas, snapshots, digests, repaired, rejected, replays, replaySnapshots. */
  stats() {
    this.#check();
    const stats = this.#callJson((f) => f.statsJson());
    stats.replays += this.#encodedHits.replay;
    stats.replaySnapshots += this.#encodedHits.snapshot;
    return stats;
  }

  /** Frees the engine objects (its activities' too). Idempotent; any other call afterwards throws. */
  dispose() {
    if (this.#link.released) return;
    this.#state = undefined;
    this.#activities?.dispose();
    this.#link.release(this);
  }

  /** @internal the state's JSON text as the engine holds it (what a store keeps; store/durable-emitter.js) */
  [kStateText]() {
    this.#check();
    return this.#invoke((f) => f.stateJson());
  }

  /** @internal fn(facade): another facade writes this emitter's state (upstream-cursor.js planWrite); its result */
  [kWriteThrough](fn) {
    this.#check();
    this.#stateValid = false;
    this.#version++;
    return fn(this.#link.facade);
  }

  /** @internal test hooks (not part of the public API) */
  [kInternals]() {
    return { engine: this.#link.engine, facade: this.#link.facade };
  }

  // Throws 'disposed' or 'engine-failed' when the StateEmitter cannot be used.
  #check() {
    this.#link.check();
  }

  // One raw call into the facade: fn(facade)'s result as it is.
  #invoke(fn) {
    return this.#link.invoke(fn);
  }

  // One call into the facade whose result is JSON text: parsed.
  #callJson(fn) {
    return this.#link.callJson(fn);
  }

  // The facade's replay(requestJson): the events, or `caller` failed ('invalid-request').
  #replay(requestJson, caller) {
    const result = this.#callJson((f) => f.replay(requestJson));
    if (!result.ok) throw failureError(result, 'invalid-request', `${caller} failed: ${result.message}`);
    return result.events;
  }
}

/**
 * Loads the sender engine (once) and creates a StateEmitter. That engine also
 * serves canonicalJson / stateDigest / verifyApproval (an agent needs the last).
 * @param {object} [options] startSeq, epoch, digestEvery, guardedPaths, testAll,
 *   snapshotRatio, replayMaxEvents, replayMaxBytes, maxDepth, editHistory, ackHistory, initialState,
 *   maxActivities (emitter.activities: 64), wasmBinary, locateFile (of the emitter module); store and key: an emitter bound to
 *   that key of a store (memoryStore(), redisStore() from agui-state-sync/server), which
 *   continues the key's state, seq and epoch and commits every event before returning it
 *   (a DurableStateEmitter: update / patch / applyEdits return promises).
 */
export async function createStateEmitter(options) {
  // options.store / key: a store-bound emitter (store/), loaded only by those who use one.
  if (options?.store !== undefined || options?.key !== undefined) {
    const { openStoreEmitter } = await import('./store/durable-emitter.js');
    return openStoreEmitter(options, createLocalEmitter);
  }
  return createLocalEmitter(options);
}

/** The sender engine (loaded once; `options`: wasmBinary, locateFile), for the upstream cursor. */
export function loadEmitterEngine(options) {
  return loadModule(EMITTER_MODULE, options ?? {});
}

/**
 * Loads the sender engine (once; idempotent) for what only a server calls
 * synchronously: renderStateForPrompt, promptMessage, effectKey. Creating a
 * StateEmitter or awaiting consumeApproval() loads it too. Options: wasmBinary,
 * locateFile (of the emitter module).
 */
export async function initServerEngine(options) {
  EngineLink.assertUsable(await loadEmitterEngine(options));
}

// The emitter over its own C++ facade (what createStateEmitter gives without a store).
async function createLocalEmitter(options) {
  const json = emitterOptions(options);
  const engine = await loadEmitterEngine(options);
  const link = EngineLink.create(engine, 'EmitterFacade', json, 'StateEmitter');
  return new StateEmitter(link, activityOptions(options));
}
