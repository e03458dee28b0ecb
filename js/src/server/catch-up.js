// The server side of the resync conversation (docs/wire.md section 3) for a
// StateEmitter: read where a reconnecting client is, and answer with nothing,
// the missed deltas, or one snapshot.
import { syncTypeError } from '../engine/errors.js';
import { kActivitiesInUse, kActivityCatchUp, kCatchUp, kCatchUpEncoded, kStoreCatchUp } from '../engine/internals.js';
import { after } from './emitter-writes.js';
import {
  HEADER_ACTIVITIES,
  HEADER_CATCH_UP,
  HEADER_EPOCH,
  HEADER_HELD,
  HEADER_LAST_EVENT_ID,
  HEADER_REASON,
  HEADER_SEQ,
  parseHeld,
  parseSeq,
} from '../shared/resync-wire.js';

// `lowercased`: the names are lowercase already (Node's IncomingMessage), so a
// missing header costs no scan of the names (a fan-out answers 1,000s of these).
function headerValue(headers, name, lowercased) {
  let value;
  if (typeof headers.get === 'function') value = headers.get(name); // WHATWG Headers
  else {
    const lower = name.toLowerCase();
    const key = lowercased || Object.hasOwn(headers, lower)
      ? lower
      : Object.keys(headers).find((k) => k.toLowerCase() === lower);
    value = key === undefined ? undefined : headers[key];
  }
  if (Array.isArray(value)) value = value[0];
  return typeof value === 'string' ? value.trim() : null;
}

/**
 * Where the client says it is: { lastSeq, epoch, reason, lastEventId }, each
 * null when absent or malformed, `held`: the seqs it holds in its reorder
 * window (X-AGUI-State-Held / stateSync.held; [] when absent, bad entries dropped), and
 * `activities`: its activity positions as they came (the X-AGUI-State-Activities
 * value, or stateSync.activities; null when it keeps none; the core reads them).
 * `request` is an HTTP request ({headers}: Node
 * IncomingMessage, a fetch Request, or a plain object) or a RunAgentInput
 * (forwardedProps.stateSync). Last-Event-ID is reported but never taken for the
 * seq: without an epoch it cannot prove which incarnation's seq it is.
 */
export function readResyncRequest(request) {
  const position = { lastSeq: null, epoch: null, reason: null, lastEventId: null, held: [], activities: null };
  if (request === null || typeof request !== 'object') return position;
  const headers = request.headers;
  if (headers !== null && typeof headers === 'object') {
    const read = (name) => headerValue(headers, name, Array.isArray(request.rawHeaders));
    position.lastSeq = parseSeq(read(HEADER_SEQ) ?? undefined);
    position.lastEventId = read(HEADER_LAST_EVENT_ID);
    position.epoch = read(HEADER_EPOCH) || null;
    position.reason = read(HEADER_REASON) || null;
    position.held = parseHeld(read(HEADER_HELD));
    position.activities = read(HEADER_ACTIVITIES);
    return position;
  }
  const stateSync = request.forwardedProps?.stateSync;
  if (stateSync === null || typeof stateSync !== 'object') return position;
  position.lastSeq = typeof stateSync.lastSeq === 'number' ? parseSeq(stateSync.lastSeq) : null; // JSON: a number
  const epoch = stateSync.epoch;
  if (typeof epoch === 'string') position.epoch = epoch;
  else if (Number.isSafeInteger(epoch)) position.epoch = String(epoch);
  if (typeof stateSync.reason === 'string' && stateSync.reason) position.reason = stateSync.reason;
  position.held = Array.isArray(stateSync.held) ? parseHeld(stateSync.held) : []; // JSON: an array of numbers
  // An array, or the header's value (a position the proxy carries over from a resumed stream's headers).
  if (Array.isArray(stateSync.activities) || typeof stateSync.activities === 'string') position.activities = stateSync.activities;
  return position;
}

/**
 * What to send a (re)connecting client before live events (its activities'
 * events, if the emitter has activities and the client said where its are,
 * after the state's, with `activities`: [{ messageId, mode }]):
 *   { mode: 'current', events: [] }      it is up to date (same epoch, same seq);
 *   { mode: 'replay', events: [deltas] } the deltas it missed, as first sent,
 *     except those it says it holds (`held`);
 *   { mode: 'snapshot', events: [snapshot] } anything else: no or unknown seq,
 *     another (or no) epoch, too old for the replay buffer, a replay costlier than
 *     a snapshot, or a reason saying its state is wrong (SNAPSHOT_REASONS).
 * For a store-bound emitter (createStateEmitter({ store, key })) a Promise of
 * that: it first catches up with what other instances wrote to the store.
 */
export function catchUp(emitter, request, activityStream) {
  if (emitter !== null && typeof emitter === 'object' && typeof emitter[kStoreCatchUp] === 'function') {
    return after(emitter[kStoreCatchUp](request), (answer) => withActivities(emitter, request, answer, activityStream));
  }
  if (emitter === null || typeof emitter !== 'object' || typeof emitter[kCatchUp] !== 'function') {
    throw syncTypeError('invalid-argument', 'catchUp() needs a StateEmitter');
  }
  const { lastSeq, epoch, reason, held } = readResyncRequest(request);
  // The decision is the core's (EmitterFacade::catchUp, ActivityFacade::catchUp).
  return withActivities(emitter, request, emitter[kCatchUp]({ lastSeq, epoch, reason, held }), activityStream);
}

/**
 * The state's catch-up `answer` with the activities' after it (unchanged when
 * there is nothing to answer for). `activityStream`: the run's (internal), whose
 * client then holds every activity.
 */
export function withActivities(emitter, request, answer, activityStream) {
  const activities = emitter[kActivitiesInUse]?.() ?? null;
  const positions = activities === null ? null : readResyncRequest(request).activities;
  if (positions === null) return answer;
  const caught = activities[kActivityCatchUp](positions, activityStream);
  return { ...answer, events: [...answer.events, ...caught.events], activities: caught.activities };
}

/**
 * catchUp() written to a Node http.ServerResponse (or anything with write /
 * setHeader / headersSent): sets X-AGUI-State-Sync: <mode> if the headers are
 * not sent yet, then writes the events SSE-encoded (for 'current', a heartbeat). Returns what catchUp returned
 * (a Promise for a store-bound emitter, resolved once written).
 */
export function writeCatchUp(res, emitter, request) {
  const encoded = encodedCatchUp(emitter, request);
  if (encoded !== null) {
    writeAnswer(res, emitter, encoded.mode, encoded.text);
    return lazyAnswer(encoded);
  }
  const result = catchUp(emitter, request);
  if (typeof result?.then === 'function') return result.then((r) => writeResult(res, emitter, r));
  return writeResult(res, emitter, result);
}

/**
 * A plain StateEmitter's answer, already encoded (kCatchUpEncoded: the same bytes
 * for the same position while the emitter is unchanged), or null where the
 * answer depends on more than the position: a store-bound emitter, held seqs, or
 * activity positions to answer for.
 */
function encodedCatchUp(emitter, request) {
  if (emitter === null || typeof emitter !== 'object' || typeof emitter[kCatchUpEncoded] !== 'function') return null;
  const { lastSeq, epoch, reason, held, activities } = readResyncRequest(request);
  if (held.length > 0 || (activities !== null && emitter[kActivitiesInUse]() !== null)) return null;
  return emitter[kCatchUpEncoded]({ lastSeq, epoch, reason, held });
}

// catchUp()'s shape for a kept answer: its events parsed only if read (each reader gets its own objects).
function lazyAnswer({ mode, eventsJson }) {
  let events = null;
  return {
    mode,
    get events() {
      events ??= JSON.parse(eventsJson);
      return events;
    },
  };
}

function writeResult(res, emitter, result) {
  writeAnswer(res, emitter, result.mode, result.events.map((event) => emitter.encode(event)).join(''));
  return result;
}

function writeAnswer(res, emitter, mode, text) {
  if (!res.headersSent && typeof res.setHeader === 'function') res.setHeader(HEADER_CATCH_UP, mode);
  if (text) res.write(text);
  // A state that needs nothing still answers: a heartbeat at the client's seq ends a
  // restored client's resync (reason 'restored') now rather than at the next beat.
  if (mode === 'current' && typeof emitter.heartbeat === 'function') res.write(emitter.heartbeat());
}
