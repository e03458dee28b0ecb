// The client side of the resync conversation (docs/wire.md section 3) as a
// reusable loop: fetch the stream, feed its bytes to a StateSync, and when the
// engine asks for a resync or the connection ends or breaks, end the stream,
// wait (exponential backoff), and reconnect saying where the state is. Two
// callers share it: connectStateSync (connect.js) and StateSyncHttpAgent
// (state-sync-agent.js); each supplies how a request is built (`request`) and,
// optionally, how bytes reach the engine (`feed`).
import { AguiSyncError, reportListenerError, syncError, syncTypeError } from '../engine/errors.js';
import {
  connectionTypeOf,
  formatActivities,
  formatHeld,
  HEADER_ACTIVITIES,
  HEADER_CATCH_UP,
  HEADER_EPOCH,
  HEADER_HELD,
  HEADER_LAST_EVENT_ID,
  HEADER_REASON,
  HEADER_SEQ,
  isHeaderSafe,
  parseHeld,
} from '../shared/resync-wire.js';

// A resync, of the state or of an activity (it names a messageId; docs/wire.md
// section 11): the reason to reconnect. The catch-up answers both: the client
// says where each activity is (X-AGUI-State-Activities / stateSync.activities).
const isResync = (outcome) => outcome.kind === 'resync';

const TERMINAL_EVENTS = new Set(['RUN_FINISHED', 'RUN_ERROR']);
const RETRYABLE_STATUS = new Set([408, 425, 429]);

/**
 * Thrown inside the loop for what must end it: the StateSync is gone or broken,
 * or the server refused the request. Never leaves the loop: run() unwraps it.
 */
export class Fatal {
  constructor(error) {
    this.error = error;
  }
}

// Calls into the StateSync; what they throw ends the loop.
function guarded(fn) {
  try {
    return fn();
  } catch (error) {
    throw new Fatal(error);
  }
}

/** The checked backoff options ({initialMs, maxMs, factor, jitter}); `who` names the caller in messages. */
export function backoffOptions(backoff = {}, who = 'connectStateSync()') {
  if (backoff === null || typeof backoff !== 'object') throw syncTypeError('invalid-options', `${who} backoff must be an object`);
  const { initialMs = 500, maxMs = 10000, factor = 2, jitter = 0.5 } = backoff;
  for (const [name, value] of [['initialMs', initialMs], ['maxMs', maxMs], ['factor', factor]]) {
    if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value)) {
      throw syncTypeError('invalid-options', `${who} backoff.${name} must be a number >= 0`);
    }
  }
  const spread = jitter === true ? 0.5 : jitter === false ? 0 : jitter;
  if (typeof spread !== 'number' || !(spread >= 0 && spread <= 1)) {
    throw syncTypeError('invalid-options', `${who} backoff.jitter must be a fraction in [0, 1] (or a boolean)`);
  }
  return { initialMs, maxMs, factor: Math.max(1, factor), jitter: spread };
}

/** Throws unless `value` is undefined or a positive number of milliseconds. */
export function checkIdleTimeout(value, who) {
  if (value !== undefined && (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value))) {
    throw syncTypeError('invalid-options', `${who}.idleTimeoutMs must be a positive number of milliseconds`);
  }
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
 * Sets the catch-up request headers (docs/wire.md section 3) for `position` on
 * a Headers object. `withBody`: the request carries forwardedProps.stateSync,
 * which holds the activity positions: X-AGUI-State-Activities is then left out,
 * one custom header fewer for a deployment's CORS preflight to allow.
 */
export function setCatchUpHeaders(headers, position, withBody = false) {
  if (!headers.has('accept')) headers.set('accept', 'text/event-stream');
  if (position.lastSeq !== null) headers.set(HEADER_SEQ, String(position.lastSeq));
  if (position.epoch !== null && isHeaderSafe(position.epoch)) headers.set(HEADER_EPOCH, position.epoch);
  if (position.reason !== null) headers.set(HEADER_REASON, position.reason);
  const held = formatHeld(position.held);
  if (held) headers.set(HEADER_HELD, held);
  if (position.lastEventId !== null && isHeaderSafe(position.lastEventId)) headers.set(HEADER_LAST_EVENT_ID, position.lastEventId);
  if (position.activities && !withBody) headers.set(HEADER_ACTIVITIES, formatActivities(position.activities));
  return headers;
}

/**
 * RunAgentInput.forwardedProps.stateSync for `position`, with the browser's
 * effective connection type when it reports one (servers label metrics by it).
 */
export function stateSyncProps(position) {
  const props = { lastSeq: position.lastSeq, epoch: position.epoch, reason: position.reason, held: position.held };
  const connection = connectionTypeOf(globalThis.navigator?.connection?.effectiveType);
  if (connection !== null) props.connection = connection;
  if (position.activities) props.activities = position.activities;
  return props;
}

// A connection that silently stops delivering (a dead TCP path, a stuck proxy)
// never ends by itself: after `ms` without a byte it is treated as broken
// (`onIdle` aborts the request, which also tells the guard: sync.end()).
class IdleWatch {
  #ms;
  #onIdle;
  #timer = null;
  fired = false;

  constructor(ms, onIdle) {
    this.#ms = ms;
    this.#onIdle = onIdle;
  }

  /** (Re)starts the countdown; a no-op without idleTimeoutMs. */
  arm() {
    if (this.#ms === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.fired = true;
      this.#onIdle();
    }, this.#ms);
  }

  clear() {
    clearTimeout(this.#timer);
  }
}

// The error for a response that is not ok: Fatal (ends the loop) for a 4xx other than 408/425/429.
function responseError(response) {
  const error = syncError('http-error', `the stream request failed: HTTP ${response.status}`, { status: response.status });
  const refused = response.status >= 400 && response.status < 500 && !RETRYABLE_STATUS.has(response.status);
  return refused ? new Fatal(error) : error;
}

/**
 * The resync conversation's loop: one #connectOnce per request, backoff in between.
 * config: { url, fetch, backoff (backoffOptions()), idleTimeoutMs, signal,
 *   request(position, signal) -> RequestInit (throw a Fatal to end the loop),
 *   feed?(bytes) -> outcomes (default sync.feed), onOutcome, onStatus, onChunk }.
 */
export class ReconnectLoop {
  #sync;
  #config;
  #feed;
  #closed = false;
  #current = null; // AbortController of the request in flight
  #wake = null; // ends the backoff wait early

  constructor(sync, config) {
    this.#sync = sync;
    this.#config = config;
    this.#feed = config.feed ?? ((bytes) => sync.feed(bytes));
    this.close = this.close.bind(this);
    const { signal } = config;
    if (signal) {
      if (signal.aborted) this.close();
      else signal.addEventListener('abort', this.close, { once: true });
    }
  }

  /** Stops the loop and aborts the request in flight. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#current) this.#current.abort();
    if (this.#wake) this.#wake();
  }

  /** Runs until closed, a finished run, or a fatal error (rejects with it). */
  async run() {
    try {
      await this.#loop();
    } catch (thrown) {
      this.#fail(thrown);
    } finally {
      this.#closed = true;
      if (this.#config.signal) this.#config.signal.removeEventListener('abort', this.close);
    }
    this.#status('closed', {});
  }

  async #loop() {
    let failures = 0;
    for (let attempt = 1; !this.#closed; attempt++) {
      const { finished, progressed, error } = await this.#connectOnce(attempt);
      if (finished || this.#closed) break;
      if (progressed) failures = 0;
      const delayMs = delayFor(this.#config.backoff, failures++);
      this.#status('waiting', { attempt, delayMs, error });
      if (this.#closed) break; // closed by the onStatus listener
      await this.#sleep(delayMs);
      if (this.#closed) break;
      guarded(() => this.#sync.reset());
    }
  }

  // The loop ended by a throw: a disposed StateSync (or a close) just stops it;
  // anything else is reported and rethrown (`run()` rejects).
  #fail(thrown) {
    const error = thrown instanceof Fatal ? thrown.error : thrown;
    const disposed = error instanceof AguiSyncError && error.code === 'disposed';
    if (this.#closed || disposed) return;
    this.#closed = true;
    this.#status('closed', { error });
    throw error;
  }

  // One request: { finished, progressed (any byte arrived), error (why it ended, or null) }.
  async #connectOnce(attempt) {
    const position = this.#position(attempt);
    const controller = new AbortController();
    this.#current = controller;
    if (this.#closed) controller.abort();
    const request = this.#config.request(position, controller.signal);
    const progress = { progressed: false };
    const { idleTimeoutMs } = this.#config;
    const idle = new IdleWatch(idleTimeoutMs, () => controller.abort());
    idle.arm();
    try {
      const { resync, ranToEnd } = await this.#stream(attempt, request, idle, progress);
      const finished = !resync && ranToEnd && guarded(() => this.#sync.status) !== 'resyncing';
      return { finished, progressed: progress.progressed, error: null };
    } catch (thrown) {
      if (thrown instanceof Fatal || this.#closed) throw thrown;
      const error = idle.fired
        ? syncError('idle-timeout', `the stream was idle for ${idleTimeoutMs} ms (no byte, not even a heartbeat)`)
        : thrown;
      this.#report(guarded(() => this.#sync.end()));
      return { finished: false, progressed: progress.progressed, error };
    } finally {
      idle.clear();
      controller.abort();
      if (this.#current === controller) this.#current = null;
    }
  }

  // Where the state is, for the request's headers and body.
  #position(attempt) {
    const sync = this.#sync;
    return guarded(() => {
      const request = sync.resyncRequest();
      return {
        attempt,
        lastSeq: sync.lastSeq,
        epoch: sync.epoch ?? null,
        reason: request ? request.reason : null,
        lastEventId: sync.lastEventId,
        held: request ? parseHeld(request.held) : [],
        activities: sync.activityPositions?.() ?? null,
      };
    });
  }

  // Fetches the stream and feeds it until it ends or asks for a resync, then ends it.
  async #stream(attempt, request, idle, progress) {
    this.#status('connecting', { attempt });
    const response = await this.#config.fetch(this.#config.url, request);
    if (!response.ok) throw responseError(response);
    this.#status('open', { attempt, catchUp: response.headers?.get?.(HEADER_CATCH_UP) ?? null });
    let fed = { resync: null, ranToEnd: false };
    if (response.body) fed = await this.#pump(response.body.getReader(), idle, progress);
    let resync = fed.resync;
    for (const outcome of guarded(() => this.#sync.end())) {
      if (isResync(outcome)) resync = resync ?? outcome;
      this.#notifyOutcome(outcome);
    }
    return { resync, ranToEnd: fed.ranToEnd };
  }

  // Reads the body into the engine: { resync (the first resync outcome), ranToEnd (a terminal event came) }.
  async #pump(reader, idle, progress) {
    let resync = null;
    let ranToEnd = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (value.length > 0) {
        progress.progressed = true;
        idle.arm();
      }
      notify(this.#config.onChunk, value, 'an onChunk listener');
      for (const outcome of guarded(() => this.#feed(value))) {
        if (isResync(outcome)) resync = resync ?? outcome;
        else if (outcome.kind === 'event' && TERMINAL_EVENTS.has(outcome.event?.type)) ranToEnd = true;
        this.#notifyOutcome(outcome);
      }
      if (resync || this.#closed) {
        reader.cancel().catch(() => {});
        break;
      }
    }
    return { resync, ranToEnd };
  }

  #report(outcomes) {
    outcomes.forEach((outcome) => this.#notifyOutcome(outcome));
  }

  #notifyOutcome(outcome) {
    notify(this.#config.onOutcome, outcome, 'an onOutcome listener');
  }

  #status(state, extra) {
    notify(this.#config.onStatus, { state, ...extra }, 'an onStatus listener');
  }

  #sleep(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const loop = this;
      function done() {
        clearTimeout(timer);
        loop.#wake = null;
        resolve();
      }
      this.#wake = done;
    });
  }
}
