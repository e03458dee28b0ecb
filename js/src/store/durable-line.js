// Helpers of the store-bound emitter (durable-emitter.js): building the local
// StateEmitter that computes a stored line's events, the records an append
// carries, and the catch-up answer while the store cannot vouch for a replay.
import { kCatchUpSnapshot, kStateText } from '../internals.js';
import { readResyncRequest, SNAPSHOT_REASONS } from '../server.js';

/**
 * A local emitter continuing `line` ({ epoch, seq, state: JSON text, events?: [JSON text] }):
 * { local, events } (the log's events, parsed).
 */
export async function buildLocal(create, options, line) {
  const local = await create({ ...options, epoch: line.epoch, startSeq: line.seq, initialState: JSON.parse(line.state) });
  // The log's events become its replay ring and edit ledger (one parse of the whole log).
  const events = line.events?.length ? JSON.parse(`[${line.events.join(',')}]`) : [];
  if (events.length) local.adoptHistory(events);
  return { local, events };
}

/** The events of `events` (a line's log) that come after `seen` ({ epoch, seq }): all of them in another epoch. */
export function eventsAfter(events, seen) {
  return events.filter((e) => e.metadata?.epoch !== seen.epoch || e.metadata.seq > seen.seq);
}

/** Where `local` stands, as a store line: { epoch, seq, state }. */
export function lineOf(local) {
  return { epoch: local.epoch, seq: local.seq, state: local[kStateText]() };
}

/** The log records of `events`: [{ seq, text, snapshot }]. */
export function logRecords(events) {
  return events.map((e) => ({ seq: e.metadata.seq, text: JSON.stringify(e), snapshot: e.type === 'STATE_SNAPSHOT' }));
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
