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
 * Starts the upstream request: { head, abort }. `head` resolves with the
 * response once its head arrived ({ status, headers, res }; its body not read
 * yet), or rejects with an AguiSyncError 'upstream-failed' when none came
 * (refused connection, timeout, a header Node will not send). abort() cancels
 * the request, before or after its head.
 */
export function openUpstream(config, body, clientHeaders) {
  const { upstream } = config;
  const payload = Buffer.from(body);
  const transport = upstream.protocol === 'https:' ? https : http;
  let req;
  let response = null;
  const head = new Promise((resolve, reject) => {
    try {
      req = transport.request(upstream, { method: 'POST', headers: upstreamHeaders(clientHeaders, config.forwardHeaders, payload.length) });
    } catch (error) {
      reject(syncError('upstream-failed', `the upstream request could not be made: ${error.message}`, { cause: error }));
      return;
    }
    const headTimer = setTimeout(() => {
      reject(syncError('upstream-failed', `the upstream sent no response within ${config.upstreamTimeoutMs} ms`));
      req.destroy();
    }, config.upstreamTimeoutMs);
    headTimer.unref();
    req.on('response', (res) => {
      clearTimeout(headTimer);
      response = res;
      resolve({ status: res.statusCode, headers: res.headers, res });
    });
    req.on('error', (error) => {
      clearTimeout(headTimer);
      reject(syncError('upstream-failed', `the upstream request failed: ${error.message}`, { cause: error }));
    });
    req.end(payload);
  });
  head.catch(() => {}); // the caller awaits it; an abort before it settles must not leave a rejection unhandled
  return {
    head,
    abort: () => {
      req?.destroy();
      response?.destroy();
    },
  };
}

/** Whether the backend accepted the request (SECURITY.md: a 2xx grants). */
export const accepted = (status) => status >= 200 && status <= 299;

/**
 * Reads an accepted response (openUpstream's head): its SSE body goes to
 * `on.data(chunk)`; `on.end(error)` is called exactly once: null after a
 * complete response, else an AguiSyncError. Returns stop(): no more calls.
 */
export function readUpstream(res, on) {
  const call = { settled: false };
  const settle = (error) => {
    if (call.settled) return;
    call.settled = true;
    on.end(error);
  };
  const type = String(res.headers['content-type'] ?? '');
  if (!SSE_TYPE.test(type)) {
    res.resume(); // drain and forget the body
    res.on('error', () => {});
    queueMicrotask(() => settle(syncError('upstream-failed', `the upstream answered a ${type || 'untyped'} body, not text/event-stream`, { status: res.statusCode })));
    return () => { call.settled = true; };
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
  return () => {
    call.settled = true;
    res.destroy();
  };
}

// What of a refusal's headers the client gets with its status and body.
const REFUSAL_HEADERS = ['content-type', 'www-authenticate', 'retry-after', 'cache-control'];
const MAX_REFUSAL_BYTES = 64 * 1024;

/**
 * The backend's refusal (a response that is not 2xx), as the client gets it:
 * { status, headers, body }: the body is read up to 64 KiB (the rest is cut),
 * within timeoutMs.
 */
export function readRefusal(res, timeoutMs) {
  const headers = {};
  for (const name of REFUSAL_HEADERS) if (res.headers[name] !== undefined) headers[name] = res.headers[name];
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    const done = () => {
      clearTimeout(timer);
      res.destroy();
      resolve({ status: res.statusCode, headers, body: Buffer.concat(chunks) });
    };
    const timer = setTimeout(done, timeoutMs);
    timer.unref();
    res.on('data', (chunk) => {
      const room = MAX_REFUSAL_BYTES - size;
      if (room > 0) chunks.push(chunk.subarray(0, room));
      size += chunk.length;
      if (size >= MAX_REFUSAL_BYTES) done();
    });
    res.on('end', done);
    res.on('error', done);
  });
}
