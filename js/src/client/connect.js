// connectStateSync: the client side of the resync conversation (docs/wire.md
// section 3) as a loop, so apps do not hand-write it: fetch the stream, feed
// its bytes to a StateSync, and when the engine asks for a resync or the
// connection ends or breaks, end the stream, wait (exponential backoff), and
// reconnect saying where the state is (X-AGUI-State-Seq / -Epoch /
// X-AGUI-Resync-Reason / X-AGUI-State-Held / Last-Event-ID headers, and
// forwardedProps.stateSync in a RunAgentInput body), so the server can replay
// what was missed (and leave out the deltas the client already holds).
import { syncTypeError } from '../engine/errors.js';
import { backoffOptions, checkIdleTimeout, Fatal, ReconnectLoop, setCatchUpHeaders, stateSyncProps } from './reconnect.js';

/** connectStateSync()'s arguments, checked: the loop's configuration. */
function connectOptions(sync, options) {
  if (sync === null || typeof sync !== 'object' || typeof sync.feed !== 'function') {
    throw syncTypeError('invalid-argument', 'connectStateSync() needs a StateSync');
  }
  if (options === null || typeof options !== 'object') throw syncTypeError('invalid-options', 'connectStateSync() needs options with a url');
  const { url, init = {}, body, signal, onOutcome, onStatus, onChunk, idleTimeoutMs } = options;
  checkIdleTimeout(idleTimeoutMs, 'connectStateSync() options');
  if (onChunk !== undefined && typeof onChunk !== 'function') throw syncTypeError('invalid-options', 'connectStateSync() options.onChunk must be a function');
  if (typeof url !== 'string' && !(url instanceof URL)) throw syncTypeError('invalid-options', 'connectStateSync() options.url must be a string or URL');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw syncTypeError('invalid-options', 'connectStateSync() needs options.fetch (no global fetch)');
  if (body !== undefined && typeof body !== 'function') throw syncTypeError('invalid-options', 'connectStateSync() options.body must be a function');
  const backoff = backoffOptions(options.backoff);
  const request = (position, requestSignal) => buildRequest(init, body, position, requestSignal);
  return { url, signal, onOutcome, onStatus, onChunk, idleTimeoutMs, fetch: fetchImpl, backoff, request };
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
  const loop = new ReconnectLoop(sync, connectOptions(sync, options));
  return { close: loop.close, done: loop.run() };
}

function buildRequest(init, body, position, signal) {
  const input = body ? body(position) : undefined;
  const headers = setCatchUpHeaders(new Headers(init.headers), position, input !== undefined);
  const request = { ...init, headers, signal };
  if (body) {
    if (input !== undefined) {
      if (input === null || typeof input !== 'object') throw new Fatal(syncTypeError('invalid-options', 'options.body() must return a RunAgentInput object or undefined'));
      // The app's own stateSync fields (its pending edits: sync.runInput()) travel
      // too; the position fields are the loop's, since only it knows them.
      const stateSync = { ...input.forwardedProps?.stateSync, ...stateSyncProps(position) };
      request.body = JSON.stringify({ ...input, forwardedProps: { ...input.forwardedProps, stateSync } });
      request.method = init.method ?? 'POST';
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    }
  }
  return request;
}
