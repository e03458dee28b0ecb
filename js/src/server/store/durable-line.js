// Helpers of the store-bound emitter (durable-emitter.js): building the local
// StateEmitter that computes a stored line's events, the records an append
// carries, and the catch-up answer while the store cannot vouch for a replay.
import { kCatchUpSnapshot, kStateText } from '../../engine/internals.js';
import { readResyncRequest } from '../catch-up.js';
import { SNAPSHOT_REASONS } from '../../shared/resync-wire.js';
import { applyDelta } from '../../shared/state-mirror.js';
import { syncError } from '../../engine/errors.js';
import { wireFields, wireSeq } from '../../engine/wire-meta.js';

// The state at the line's seq: the stored state (at stateSeq) with the
// logged events after stateSeq applied. Those were committed by an emitter
// that computed them from exactly that state, so they apply; one that does
// not means the store was changed behind our back.
function stateAtHead(line, events) {
  let state = JSON.parse(line.state);
  const from = line.stateSeq ?? line.seq;
  const after = { events: 0, bytes: 0 };
  events.forEach((event, i) => {
    if (!(wireSeq(event) > from)) return;
    after.events++;
    after.bytes += Buffer.byteLength(line.events[i]);
    try {
      state = event.type === 'STATE_SNAPSHOT' ? event.snapshot : applyDelta(state, event.delta);
    } catch (error) {
      throw syncError('store-conflict', `the stored log does not apply to the stored state at seq ${wireSeq(event)} (${error.message})`);
    }
  });
  return { state, after };
}

/**
 * A local emitter continuing `line` ({ epoch, seq, state: JSON text at
 * stateSeq (default seq), stateSeq?, events?: [JSON text] }): { local, events
 * (the log's, parsed), state (at seq), sinceState: { events, bytes } logged
 * after stateSeq }.
 */
export async function buildLocal(create, options, line) {
  // One parse of the whole log: its events become the replay ring and edit ledger.
  const events = line.events?.length ? JSON.parse(`[${line.events.join(',')}]`) : [];
  const { state, after } = stateAtHead(line, events);
  const local = await create({ ...options, epoch: line.epoch, startSeq: line.seq, initialState: state });
  if (events.length) local.adoptHistory(events);
  return { local, events, state, sinceState: after };
}

/** The events of `events` (a line's log) that come after `seen` ({ epoch, seq }): all of them in another epoch. */
export function eventsAfter(events, seen) {
  return events.filter((e) => wireFields(e)?.epoch !== seen.epoch || wireSeq(e) > seen.seq);
}

/** Where `local` stands, as a store line: { epoch, seq, state }. */
export function lineOf(local) {
  return { epoch: local.epoch, seq: local.seq, state: local[kStateText]() };
}

/** The log records of `events`: [{ seq, text, snapshot }]. */
export function logRecords(events) {
  return events.map((e) => ({ seq: wireSeq(e), text: JSON.stringify(e), snapshot: e.type === 'STATE_SNAPSHOT' }));
}

/** `state` moved along `events` (the committed ones), or null when one does not apply (then read it from the engine). */
export function advanceState(state, events) {
  let out = state;
  try {
    for (const e of events) out = e.type === 'STATE_SNAPSHOT' ? e.snapshot : applyDelta(out, e.delta);
  } catch {
    return null;
  }
  return out;
}

/** A fresh epoch for a line only this process writes. */
export function freshEpoch() {
  return globalThis.crypto.randomUUID();
}

/**
 * The catch-up when no replay can be vouched for (the store is unreachable):
 * nothing for a client exactly at the emitter's epoch and seq, else a snapshot.
 */
export function snapshotCatchUp(local, request) {
  const { lastSeq, epoch, reason } = readResyncRequest(request);
  const wrong = reason !== null && SNAPSHOT_REASONS.has(reason);
  if (!wrong && lastSeq === local.seq && epoch === local.epoch) return { mode: 'current', events: [] };
  return { mode: 'snapshot', events: [local[kCatchUpSnapshot]()] };
}

/** `value` copied now as JSON (the caller may change it before its turn in the queue). */
export function copyArgument(value) {
  let text;
  try {
    text = JSON.stringify(value);
  } catch {
    return value; // not JSON: the emitter's own check says so, with its code
  }
  return text === undefined ? value : JSON.parse(text);
}

/** The events of an update/patch result (an array) or an applyEdits result ({ events }). */
export function eventsOf(out) {
  return Array.isArray(out) ? out : out.events;
}

/** `out` with its events replaced. */
export function withEvents(out, events) {
  return Array.isArray(out) ? events : { ...out, events };
}
