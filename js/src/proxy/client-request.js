// A client's request to the proxy, read defensively and classified:
//  - { kind: 'abort', runId, fingerprint }: POST with X-AGUI-Abort: <runId>;
//  - { kind: 'stream', input, edits, eventId, position, plain, fingerprint }: a
//    RunAgentInput (POST) and/or a Last-Event-ID of ours (a GET must have one);
//    edits: its forwardedProps.stateSync.edits, checked (null: none); plain:
//    the client said nothing of a position (a plain AG-UI client);
//  - { kind: 'attach', threadId, eventId, position, fingerprint }: GET with
//    X-AGUI-Attach: <threadId> (and the catch-up headers; Last-Event-ID when
//    it resumes the stream it attached to).
// Anything hostile is refused with an AguiSyncError carrying the HTTP `status`
// to answer: 405, 408, 413, 415 or 400. Values that are merely wrong (an
// X-AGUI-State-* header, a Last-Event-ID that is not ours) are ignored.
import { syncError } from '../engine/errors.js';
import { HEADER_ABORT, HEADER_ACTIVITIES, HEADER_ATTACH, HEADER_EPOCH, HEADER_HELD, HEADER_REASON, HEADER_SEQ } from '../shared/resync-wire.js';
import { readRunEdits } from '../server/run-edits.js';
import { readResyncRequest } from '../server/catch-up.js';
import { parseEventId } from './sse-out.js';
import { requesterOf } from './run-life.js';

export { HEADER_ABORT, HEADER_ATTACH };

const MAX_ID_CHARS = 1024; // threadId, runId
const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i;
const STATE_HEADERS = [HEADER_SEQ, HEADER_EPOCH, HEADER_REASON, HEADER_HELD, HEADER_ACTIVITIES].map((name) => name.toLowerCase());

/** A request header's first value, trimmed; null when absent. */
export function header(req, name) {
  const value = req.headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return typeof text === 'string' ? text.trim() : null;
}

function validId(value) {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_CHARS;
}

/** Who is asking, as far as the upstream can tell: a digest of the credential headers that are forwarded. */
// Who sent it: the core's requester digest of the credential headers (SECURITY.md), the one
// the access gate, an abort and a stored run's meta use, in every language.
function fingerprint(req, config) {
  return requesterOf(config.credentialHeaders.map((name) => header(req, name)));
}

/** The body, at most maxBodyBytes, within bodyTimeoutMs. */
export function readBody(req, { maxBodyBytes, bodyTimeoutMs }) {
  if (Number(req.headers['content-length']) > maxBodyBytes) {
    return Promise.reject(syncError('limit-exceeded', `the request body is larger than ${maxBodyBytes} bytes`, { status: 413 }));
  }
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    const done = (error, value) => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onError);
      if (error) reject(error);
      else resolve(value);
    };
    const slow = () => done(syncError('invalid-request', `the request body took longer than ${bodyTimeoutMs} ms`, { status: 408 }));
    const timer = setTimeout(slow, bodyTimeoutMs);
    timer.unref();
    const onData = (chunk) => {
      size += chunk.length;
      if (size > maxBodyBytes) done(syncError('limit-exceeded', `the request body is larger than ${maxBodyBytes} bytes`, { status: 413 }));
      else chunks.push(chunk);
    };
    const onEnd = () => done(null, Buffer.concat(chunks));
    const onError = (error) => done(syncError('invalid-request', `the request body broke off: ${error.message}`, { status: 400 }));
    req.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** A RunAgentInput from the body: a JSON object with a threadId and a runId. */
function parseInput(req, body) {
  const type = header(req, 'content-type');
  if (type !== null && !JSON_TYPE.test(type)) {
    throw syncError('invalid-request', `the request body must be application/json, not ${type.slice(0, 100)}`, { status: 415 });
  }
  let input;
  try {
    input = JSON.parse(body.toString('utf8'));
  } catch {
    throw syncError('invalid-json', 'the request body is not JSON', { status: 400 });
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw syncError('invalid-request', 'the request body must be a RunAgentInput object', { status: 400 });
  }
  for (const name of ['threadId', 'runId']) {
    if (!validId(input[name])) {
      throw syncError('invalid-request', `RunAgentInput.${name} must be a string of 1 to ${MAX_ID_CHARS} characters`, { status: 400 });
    }
  }
  // A threadId names the thread's store key; keys starting with a NUL are the library's own (a
  // thread's activity record, src/emit/activity_record.h): refused before anything is forwarded.
  if (input.threadId[0] === '\u0000') throw syncError('invalid-request', 'RunAgentInput.threadId must not start with a NUL', { status: 400 });
  return input;
}

const hasStateHeaders = (req) => STATE_HEADERS.some((name) => req.headers[name] !== undefined);

/**
 * Where the client's state is (readResyncRequest): from the X-AGUI-State-*
 * headers when it sent any, else from forwardedProps.stateSync. A request with
 * a body carries its activity positions there only (no header for CORS to allow).
 */
function clientPosition(req, input) {
  if (!hasStateHeaders(req)) return readResyncRequest(input);
  const position = readResyncRequest(req);
  if (position.activities === null && input) position.activities = readResyncRequest(input).activities;
  return position;
}

// No X-AGUI-State-* header and no forwardedProps.stateSync: a client that does not sequence.
function isPlain(req, input) {
  const stateSync = input?.forwardedProps?.stateSync;
  return !hasStateHeaders(req) && (stateSync === null || typeof stateSync !== 'object');
}

/** Reads and classifies `req` (see the top of this file). */
export async function readClientRequest(req, config) {
  if (req.method !== 'POST' && req.method !== 'GET') {
    throw syncError('invalid-request', `method ${req.method} is not allowed`, { status: 405 });
  }
  const abortRunId = header(req, HEADER_ABORT.toLowerCase());
  if (abortRunId !== null) {
    if (req.method !== 'POST') throw syncError('invalid-request', `${HEADER_ABORT} needs a POST`, { status: 405 });
    await readBody(req, config); // whatever it holds, it is not needed
    if (!validId(abortRunId)) throw syncError('invalid-request', `${HEADER_ABORT} must name a runId`, { status: 400 });
    return { kind: 'abort', runId: abortRunId, fingerprint: fingerprint(req, config) };
  }
  const eventId = parseEventId(header(req, 'last-event-id'));
  const attach = header(req, HEADER_ATTACH.toLowerCase());
  if (attach !== null) {
    if (req.method !== 'GET') throw syncError('invalid-request', `${HEADER_ATTACH} needs a GET`, { status: 405 });
    if (!validId(attach)) throw syncError('invalid-request', `${HEADER_ATTACH} must name a threadId`, { status: 400 });
    return { kind: 'attach', threadId: attach, eventId, position: readResyncRequest(req), fingerprint: fingerprint(req, config) };
  }
  let input = null;
  if (req.method === 'POST') input = parseInput(req, await readBody(req, config));
  else if (eventId === null) {
    throw syncError('invalid-request', 'a GET resumes a stream: it needs a Last-Event-ID this proxy sent', { status: 400 });
  }
  // Checked before anything is set up: a hostile edit list is a 400 with nothing applied.
  const edits = input === null ? null : readRunEdits(input, { maxDepth: config.emitter.maxDepth });
  return { kind: 'stream', input, edits, eventId, position: clientPosition(req, input), plain: isPlain(req, input), fingerprint: fingerprint(req, config) };
}

/**
 * The RunAgentInput as the upstream gets it. forwardedProps.stateSync is the
 * proxy's (the client's position in the proxy's numbering, and its edits,
 * which the proxy has applied), so it is removed: an upstream that applied
 * the edits again would apply them twice. `state`, when given, replaces the
 * client's (the thread's state with the accepted edits).
 */
export function forwardedInput(input, state) {
  const props = input.forwardedProps;
  const forwarded = state === undefined ? input : { ...input, state };
  if (props === null || typeof props !== 'object' || Array.isArray(props) || !Object.hasOwn(props, 'stateSync')) return forwarded;
  const { stateSync, ...rest } = props;
  return { ...forwarded, forwardedProps: rest };
}
