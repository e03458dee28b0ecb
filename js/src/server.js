// agui-state-sync/server: the server side of the resync conversation
// (docs/wire.md section 3) for a StateEmitter: read where a reconnecting
// client is, answer with nothing, the missed deltas, or one snapshot, and keep
// an idle stream alive with heartbeats. And the agent side of user edits
// (section 9; run-edits.js): judge a RunAgentInput's stateSync.edits before the
// run. Also promptMessage: the state as a prompt-safe message for the agent's
// model (docs/prompt-rendering.md).
import { syncTypeError } from './errors.js';
import { kCatchUpSnapshot, kStoreCatchUp } from './internals.js';
import { promptOptionsJson, promptPreamble, renderPromptText } from './prompt.js';
import {
  formatHeld,
  HEADER_CATCH_UP,
  HEADER_EPOCH,
  HEADER_HELD,
  HEADER_LAST_EVENT_ID,
  HEADER_REASON,
  HEADER_SEQ,
  MAX_HELD,
  parseHeld,
  parseSeq,
  SNAPSHOT_REASONS,
} from './resync-wire.js';

export { formatHeld, HEADER_CATCH_UP, HEADER_HELD, MAX_HELD, parseHeld, SNAPSHOT_REASONS };
export { applyRunEdits, MAX_EDIT_ID_BYTES, MAX_RUN_EDITS, readRunEdits } from './run-edits.js';
export { memoryStore } from './store/memory-store.js';
export { redisStore } from './store/redis-store.js';
export { consumeApproval, effectKey } from './approvals.js';

function headerValue(headers, name) {
  let value;
  if (typeof headers.get === 'function') value = headers.get(name); // WHATWG Headers
  else {
    const lower = name.toLowerCase();
    for (const key of Object.keys(headers)) {
      if (key.toLowerCase() === lower) {
        value = headers[key];
        break;
      }
    }
  }
  if (Array.isArray(value)) value = value[0];
  return typeof value === 'string' ? value.trim() : null;
}

/**
 * Where the client says it is: { lastSeq, epoch, reason, lastEventId }, each
 * null when absent or malformed, and `held`: the seqs it holds in its reorder
 * window (X-AGUI-State-Held / stateSync.held; [] when absent, bad entries dropped). `request` is an HTTP request ({headers}: Node
 * IncomingMessage, a fetch Request, or a plain object) or a RunAgentInput
 * (forwardedProps.stateSync). Last-Event-ID is reported but never taken for the
 * seq: without an epoch it cannot prove which incarnation's seq it is.
 */
export function readResyncRequest(request) {
  const position = { lastSeq: null, epoch: null, reason: null, lastEventId: null, held: [] };
  if (request === null || typeof request !== 'object') return position;
  const headers = request.headers;
  if (headers !== null && typeof headers === 'object') {
    position.lastSeq = parseSeq(headerValue(headers, HEADER_SEQ) ?? undefined);
    position.lastEventId = headerValue(headers, HEADER_LAST_EVENT_ID);
    position.epoch = headerValue(headers, HEADER_EPOCH) || null;
    position.reason = headerValue(headers, HEADER_REASON) || null;
    position.held = parseHeld(headerValue(headers, HEADER_HELD));
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
  return position;
}

/**
 * What to send a (re)connecting client before live events:
 *   { mode: 'current', events: [] }      it is up to date (same epoch, same seq);
 *   { mode: 'replay', events: [deltas] } the deltas it missed, as first sent,
 *     except those it says it holds (`held`);
 *   { mode: 'snapshot', events: [snapshot] } anything else: no or unknown seq,
 *     another (or no) epoch, too old for the replay buffer, a replay costlier than
 *     a snapshot, or a reason saying its state is wrong (SNAPSHOT_REASONS).
 * For a store-bound emitter (createStateEmitter({ store, key })) a Promise of
 * that: it first catches up with what other instances wrote to the store.
 */
export function catchUp(emitter, request) {
  if (emitter !== null && typeof emitter === 'object' && typeof emitter[kStoreCatchUp] === 'function') {
    return emitter[kStoreCatchUp](request);
  }
  if (emitter === null || typeof emitter !== 'object' || typeof emitter.replaySince !== 'function') {
    throw syncTypeError('invalid-argument', 'catchUp() needs a StateEmitter');
  }
  const { lastSeq, epoch, reason, held } = readResyncRequest(request);
  let events;
  const sameEpoch = epoch === emitter.epoch || (epoch === null && emitter.epoch === '');
  if (lastSeq === null || !sameEpoch || (reason !== null && SNAPSHOT_REASONS.has(reason))) {
    // Counted in stats().replaySnapshots; an emitter-like object without the
    // hook (not a StateEmitter) just gives its snapshot().
    events = [typeof emitter[kCatchUpSnapshot] === 'function' ? emitter[kCatchUpSnapshot]() : emitter.snapshot()];
  } else {
    events = emitter.replaySince(lastSeq, emitter.epoch, held);
  }
  const mode = events.length === 0 ? 'current' : events[0].type === 'STATE_SNAPSHOT' ? 'snapshot' : 'replay';
  return { mode, events };
}

/**
 * catchUp() written to a Node http.ServerResponse (or anything with write /
 * setHeader / headersSent): sets X-AGUI-State-Sync: <mode> if the headers are
 * not sent yet, then writes the events SSE-encoded (for 'current', a heartbeat). Returns what catchUp returned
 * (a Promise for a store-bound emitter, resolved once written).
 */
export function writeCatchUp(res, emitter, request) {
  const result = catchUp(emitter, request);
  if (typeof result?.then === 'function') return result.then((r) => writeResult(res, emitter, r));
  return writeResult(res, emitter, result);
}

function writeResult(res, emitter, result) {
  if (!res.headersSent && typeof res.setHeader === 'function') res.setHeader(HEADER_CATCH_UP, result.mode);
  if (result.events.length) res.write(result.events.map((event) => emitter.encode(event)).join(''));
  // Nothing to send still answers: a heartbeat at the client's seq ends a
  // restored client's resync (reason 'restored') now rather than at the next beat.
  else if (result.mode === 'current' && typeof emitter.heartbeat === 'function') res.write(emitter.heartbeat());
  return result;
}

/**
 * Writes emitter.heartbeat() (": hb <seq>\n\n") to `res` every `intervalMs`
 * until the returned stop() is called, the response closes, or the emitter is
 * disposed. The timer does not keep a Node process alive by itself.
 * options.write(line): where the line goes instead of res.write, for a server
 * that queues its writes (a heartbeat must not overtake a queued event, or the
 * client would see a seq ahead of the events it has and ask for a resync).
 */
export function startHeartbeat(res, emitter, intervalMs = 5000, options = {}) {
  if (typeof intervalMs !== 'number' || !(intervalMs > 0) || !Number.isFinite(intervalMs)) {
    throw syncTypeError('invalid-argument', 'startHeartbeat() intervalMs must be a positive number');
  }
  const write = options?.write ?? ((line) => res.write(line));
  if (typeof write !== 'function') throw syncTypeError('invalid-options', 'startHeartbeat() options.write must be a function');
  let timer = null;
  const stop = () => {
    if (timer === null) return;
    clearInterval(timer);
    timer = null;
    if (typeof res.off === 'function') res.off('close', stop);
  };
  timer = setInterval(() => {
    if (res.writableEnded || res.destroyed) return stop();
    let line;
    try {
      line = emitter.heartbeat();
    } catch {
      return stop(); // disposed emitter
    }
    write(line);
  }, intervalMs);
  if (typeof timer === 'object' && typeof timer.unref === 'function') timer.unref();
  if (typeof res.on === 'function') res.on('close', stop);
  return stop;
}

/**
 * The state as a lower-trust chat message for the agent's model: { role:
 * 'user', content }, a one-line preamble that says the block is data, then the
 * block of renderStateForPrompt(state, options). Use it instead of pasting
 * JSON.stringify(state) into a system prompt. (An AG-UI Message also needs an
 * id.) Synchronous; needs a loaded engine (await initEngine()). Throws what
 * renderStateForPrompt throws.
 */
export function promptMessage(state, options) {
  const { text } = renderPromptText(state, promptOptionsJson(options, 'promptMessage'), 'promptMessage');
  return { role: 'user', content: `${promptPreamble(options)}\n${text}` };
}
