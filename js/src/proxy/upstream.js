// The request to the upstream AG-UI agent: the client's RunAgentInput POSTed
// as JSON with only the allow-listed client headers, its SSE body handed over
// chunk by chunk, and every way it can fail reported once as an
// AguiSyncError ('upstream-failed', with `status` when the upstream answered).
import http from 'node:http';
import https from 'node:https';
import { syncError } from '../engine/errors.js';

const SSE_TYPE = /^text\/event-stream\s*(;|$)/i;

/** The headers sent upstream: ours, plus the allow-listed ones the client sent. */
export function upstreamHeaders(clientHeaders, allowList, bodyBytes) {
  const headers = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    'content-length': String(bodyBytes),
  };
  for (const name of allowList) {
    const value = clientHeaders[name];
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

/**
 * Starts the upstream request. `on.data(chunk)` receives the SSE body;
 * `on.end(error)` is called exactly once: null after a complete response,
 * else an AguiSyncError. Returns abort(): cancels the request (on.end is then
 * not called; the caller knows why it aborted).
 */
export function openUpstream(config, body, clientHeaders, on) {
  const { upstream } = config;
  const payload = Buffer.from(body);
  const transport = upstream.protocol === 'https:' ? https : http;
  const call = { settled: false };
  const settle = (error) => {
    if (call.settled) return;
    call.settled = true;
    clearTimeout(headTimer);
    on.end(error);
  };
  let req;
  try {
    req = transport.request(upstream, { method: 'POST', headers: upstreamHeaders(clientHeaders, config.forwardHeaders, payload.length) });
  } catch (error) {
    // A header value Node will not send, say: reported like any failure, after the caller has its abort().
    queueMicrotask(() => on.end(syncError('upstream-failed', `the upstream request could not be made: ${error.message}`, { cause: error })));
    return () => {};
  }
  const headTimer = setTimeout(() => {
    settle(syncError('upstream-failed', `the upstream sent no response within ${config.upstreamTimeoutMs} ms`));
    req.destroy();
  }, config.upstreamTimeoutMs);
  headTimer.unref();
  req.on('response', (res) => {
    clearTimeout(headTimer);
    readResponse(res, on, settle, call);
  });
  req.on('error', (error) => settle(syncError('upstream-failed', `the upstream request failed: ${error.message}`, { cause: error })));
  req.end(payload);
  return () => {
    call.settled = true;
    clearTimeout(headTimer);
    req.destroy();
  };
}

// The upstream's response: an SSE body is streamed to on.data; anything else is an error.
function readResponse(res, on, settle, call) {
  const type = String(res.headers['content-type'] ?? '');
  if (res.statusCode < 200 || res.statusCode > 299 || !SSE_TYPE.test(type)) {
    const what = res.statusCode >= 200 && res.statusCode <= 299 ? `a ${type || 'untyped'} body, not text/event-stream` : `HTTP ${res.statusCode}`;
    res.resume(); // drain and forget the body
    res.on('error', () => {});
    settle(syncError('upstream-failed', `the upstream answered ${what}`, { status: res.statusCode }));
    return;
  }
  res.on('data', (chunk) => {
    if (call.settled) return;
    try {
      on.data(chunk);
    } catch (error) {
      settle(error);
      res.destroy();
    }
  });
  res.on('end', () => settle(null));
  res.on('error', (error) => settle(syncError('upstream-failed', `the upstream stream broke: ${error.message}`, { cause: error })));
  res.on('close', () => {
    if (!res.complete) settle(syncError('upstream-failed', 'the upstream stream broke before its end'));
  });
}
