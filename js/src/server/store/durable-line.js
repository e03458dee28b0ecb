// Helpers of the store-bound emitter (durable-emitter.js): the local
// StateEmitter that continues a stored line, the records an append carries,
// and the catch-up answer while the store cannot vouch for a replay. The
// state at a stored line's head, when a write carries the state and the
// committed state are the core's (StoreLine: src/emit/store_line.h), so a
// Node and a Python emitter writing one key agree on them; this file does I/O.
import { kCatchUpSnapshot, kStateText } from '../../engine/internals.js';
import { StoreLine } from '../../engine/store-line.js';
import { readResyncRequest } from '../catch-up.js';
import { loadEmitterEngine } from '../emitter.js';
import { SNAPSHOT_REASONS } from '../../shared/resync-wire.js';
import { wireFields, wireSeq } from '../../engine/wire-meta.js';

/** The core's rules for one emitter's line, with the emitter's caps (also the log's). */
export async function lineRules(store, options) {
  const engine = await loadEmitterEngine({ wasmBinary: options.wasmBinary, locateFile: options.locateFile });
  const { replayMaxEvents, replayMaxBytes, maxDepth } = options;
  return StoreLine.create(engine, { incremental: store.incrementalState === true, replayMaxEvents, replayMaxBytes, maxDepth });
}

/**
 * A local emitter continuing `line` ({ epoch, seq, state: JSON text at
 * stateSeq (default seq), stateSeq?, events?: [JSON text] }), from the state
 * at its head (`rules` applies the log after stateSeq, and restarts its count
 * from there): { local, events (the log's, parsed) }.
 */
export async function buildLocal(create, options, line, rules, key) {
  const texts = line.events ?? [];
  const head = rules.open(line.state, line.stateSeq ?? line.seq, texts, `key ${JSON.stringify(key)}`);
  const local = await create({ ...options, epoch: line.epoch, startSeq: line.seq, initialState: JSON.parse(head) });
  // One parse of the whole log: its events become the replay ring and edit ledger.
  const events = texts.length ? JSON.parse(`[${texts.join(',')}]`) : [];
  if (events.length) local.adoptHistory(events);
  return { local, events };
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
