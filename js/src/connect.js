// connectStateSync: the client side of the resync conversation (docs/wire.md
// section 3) as a loop, so apps do not hand-write it: fetch the stream, feed
// its bytes to a StateSync, and when the engine asks for a resync or the
// connection ends or breaks, end the stream, wait (exponential backoff), and
// reconnect saying where the state is (X-AGUI-State-Seq / -Epoch /
// X-AGUI-Resync-Reason / X-AGUI-State-Held / Last-Event-ID headers, and
// forwardedProps.stateSync in a RunAgentInput body), so the server can replay
// what was missed (and leave out the deltas the client already holds).
import { DISPOSED_MESSAGE, reportListenerError, syncError, syncTypeError } from './errors.js';
import {
  formatHeld,
  HEADER_CATCH_UP,
  HEADER_EPOCH,
  HEADER_HELD,
  HEADER_LAST_EVENT_ID,
  HEADER_REASON,
  HEADER_SEQ,
  isHeaderSafe,
  parseHeld,
} from './resync-wire.js';

const TERMINAL_EVENTS = new Set(['RUN_FINISHED', 'RUN_ERROR']);
const RETRYABLE_STATUS = new Set([408, 425, 429]);

// Thrown inside the loop for what must end it: the StateSync is gone or broken.
class Fatal {
  constructor(error) {
    this.error = error;
  }
}

function backoffOptions(backoff = {}) {
  if (backoff === null || typeof backoff !== 'object') throw syncTypeError('connectStateSync() backoff must be an object');
  const { initialMs = 500, maxMs = 10000, factor = 2, jitter = 0.5 } = backoff;
  for (const [name, value] of [['initialMs', initialMs], ['maxMs', maxMs], ['factor', factor]]) {
    if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value)) {
      throw syncTypeError(`connectStateSync() backoff.${name} must be a number >= 0`);
    }
  }
  const spread = jitter === true ? 0.5 : jitter === false ? 0 : jitter;
  if (typeof spread !== 'number' || !(spread >= 0 && spread <= 1)) {
    throw syncTypeError('connectStateSync() backoff.jitter must be a fraction in [0, 1] (or a boolean)');
  }
  return { initialMs, maxMs, factor: Math.max(1, factor), jitter: spread };
}

/** The delay before reconnect attempt `failures` (0-based), jitter taken off the top. */
function delayFor(backoff, failures) {
  const base = Math.min(backoff.maxMs, backoff.initialMs * backoff.factor ** failures);
  return Math.round(base * (1 - backoff.jitter * Math.random()));
}

function notify(listener, value, where) {
  if (!listener) return;
  try {
    listener(value);
  } catch (error) {
    reportListenerError(error, where);
  }
}

/**
 * Keeps `sync` fed from `options.url` until close(), options.signal, or a run
 * that ended (RUN_FINISHED / RUN_ERROR, then a clean end of the stream, with
 * the state not resyncing). Returns { close(), done }: `done` resolves when the
 * loop stops (also when the StateSync was disposed), and rejects if the
 * StateSync's engine failed or the server refused the request (a 4xx other than
 * 408/425/429).
 */
export function connectStateSync(sync, options) {
  if (sync === null || typeof sync !== 'object' || typeof sync.feed !== 'function') {
    throw syncTypeError('connectStateSync() needs a StateSync');
  }
  if (options === null || typeof options !== 'object') throw syncTypeError('connectStateSync() needs options with a url');
  const { url, init = {}, body, signal, onOutcome, onStatus, onChunk, idleTimeoutMs } = options;
  if (idleTimeoutMs !== undefined && (typeof idleTimeoutMs !== 'number' || !(idleTimeoutMs > 0) || !Number.isFinite(idleTimeoutMs))) {
    throw syncTypeError('connectStateSync() options.idleTimeoutMs must be a positive number of milliseconds');
  }
  if (onChunk !== undefined && typeof onChunk !== 'function') throw syncTypeError('connectStateSync() options.onChunk must be a function');
  if (typeof url !== 'string' && !(url instanceof URL)) throw syncTypeError('connectStateSync() options.url must be a string or URL');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw syncTypeError('connectStateSync() needs options.fetch (no global fetch)');
  if (body !== undefined && typeof body !== 'function') throw syncTypeError('connectStateSync() options.body must be a function');
  const backoff = backoffOptions(options.backoff);

  let closed = false;
  let current = null; // AbortController of the request in flight
  let wake = null; // ends the backoff wait early
  const close = () => {
    if (closed) return;
    closed = true;
    if (current) current.abort();
    if (wake) wake();
  };
  if (signal) {
    if (signal.aborted) close();
    else signal.addEventListener('abort', close, { once: true });
  }
  const status = (state, extra) => notify(onStatus, { state, ...extra }, 'an onStatus listener');
  const sleep = (ms) => new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      wake = null;
      resolve();
    }
    wake = done;
  });

  // Calls into the StateSync; what they throw ends the loop.
  const guarded = (fn) => {
    try {
      return fn();
    } catch (error) {
      throw new Fatal(error);
    }
  };

  async function connectOnce(attempt) {
    const position = guarded(() => {
      const request = sync.resyncRequest();
      return {
        attempt,
        lastSeq: sync.lastSeq,
        epoch: sync.epoch ?? null,
        reason: request ? request.reason : null,
        lastEventId: sync.lastEventId,
        held: request ? parseHeld(request.held) : [],
      };
    });
    const controller = new AbortController();
    current = controller;
    if (closed) controller.abort();
    const request = buildRequest(init, body, position, controller.signal);
    let progressed = false; // any byte arrived: the next failure starts the backoff over
    // A connection that silently stops delivering (a dead TCP path, a stuck
    // proxy) never ends by itself: after idleTimeoutMs without a byte it is
    // treated as broken, which also tells the guard (sync.end()).
    let idleTimer = null;
    let idledOut = false;
    const armIdle = () => {
      if (idleTimeoutMs === undefined) return;
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        idledOut = true;
        controller.abort();
      }, idleTimeoutMs);
    };
    armIdle();
    try {
      status('connecting', { attempt });
      const response = await fetchImpl(url, request);
      if (!response.ok) {
        const error = syncError(`the stream request failed: HTTP ${response.status}`);
        error.status = response.status;
        if (response.status >= 400 && response.status < 500 && !RETRYABLE_STATUS.has(response.status)) throw new Fatal(error);
        throw error;
      }
      status('open', { attempt, catchUp: response.headers?.get?.(HEADER_CATCH_UP) ?? null });
      let resync = null;
      let ranToEnd = false;
      if (response.body) {
        const reader = response.body.getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          if (value.length > 0) {
            progressed = true;
            armIdle();
          }
          notify(onChunk, value, 'an onChunk listener');
          for (const outcome of guarded(() => sync.feed(value))) {
            if (outcome.kind === 'resync') resync = resync ?? outcome;
            else if (outcome.kind === 'event' && TERMINAL_EVENTS.has(outcome.event?.type)) ranToEnd = true;
            notify(onOutcome, outcome, 'an onOutcome listener');
          }
          if (resync) {
            reader.cancel().catch(() => {});
            break;
          }
        }
      }
      for (const outcome of guarded(() => sync.end())) {
        if (outcome.kind === 'resync') resync = resync ?? outcome;
        notify(onOutcome, outcome, 'an onOutcome listener');
      }
      const finished = !resync && ranToEnd && guarded(() => sync.status) !== 'resyncing';
      return { finished, progressed, error: null };
    } catch (thrown) {
      if (thrown instanceof Fatal || closed) throw thrown;
      const error = idledOut ? syncError(`the stream was idle for ${idleTimeoutMs} ms (no byte, not even a heartbeat)`) : thrown;
      guarded(() => sync.end()).forEach((outcome) => notify(onOutcome, outcome, 'an onOutcome listener'));
      return { finished: false, progressed, error };
    } finally {
      clearTimeout(idleTimer);
      controller.abort();
      if (current === controller) current = null;
    }
  }

  async function run() {
    let failures = 0;
    try {
      for (let attempt = 1; !closed; attempt++) {
        const { finished, progressed, error } = await connectOnce(attempt);
        if (finished || closed) break;
        if (progressed) failures = 0;
        const delayMs = delayFor(backoff, failures++);
        status('waiting', { attempt, delayMs, error });
        if (closed) break; // closed by the onStatus listener
        await sleep(delayMs);
        if (closed) break;
        guarded(() => sync.reset());
      }
    } catch (thrown) {
      const error = thrown instanceof Fatal ? thrown.error : thrown;
      const disposed = error instanceof Error && error.message === DISPOSED_MESSAGE;
      if (!closed && !disposed) {
        closed = true;
        status('closed', { error });
        throw error;
      }
    } finally {
      closed = true;
      if (signal) signal.removeEventListener('abort', close);
    }
    status('closed', {});
  }

  return { close, done: run() };
}

function buildRequest(init, body, position, signal) {
  const headers = new Headers(init.headers);
  if (!headers.has('accept')) headers.set('accept', 'text/event-stream');
  if (position.lastSeq !== null) headers.set(HEADER_SEQ, String(position.lastSeq));
  if (position.epoch !== null && isHeaderSafe(position.epoch)) headers.set(HEADER_EPOCH, position.epoch);
  if (position.reason !== null) headers.set(HEADER_REASON, position.reason);
  const held = formatHeld(position.held);
  if (held) headers.set(HEADER_HELD, held);
  if (position.lastEventId !== null && isHeaderSafe(position.lastEventId)) headers.set(HEADER_LAST_EVENT_ID, position.lastEventId);
  const request = { ...init, headers, signal };
  if (body) {
    const input = body(position);
    if (input !== undefined) {
      if (input === null || typeof input !== 'object') throw new Fatal(syncTypeError('options.body() must return a RunAgentInput object or undefined'));
      const stateSync = { lastSeq: position.lastSeq, epoch: position.epoch, reason: position.reason, held: position.held };
      request.body = JSON.stringify({ ...input, forwardedProps: { ...input.forwardedProps, stateSync } });
      request.method = init.method ?? 'POST';
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    }
  }
  return request;
}
