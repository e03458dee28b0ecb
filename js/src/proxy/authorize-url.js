// authorizeUrl(url): an `authorize` option that asks an HTTP endpoint, in the
// manner of nginx's auth_request. For each request the access gate does not
// know yet, a GET goes to `url` with the requester's credential headers and
// X-AGUI-Thread / X-AGUI-Access naming what is asked; a 2xx authorizes, any
// other answer, an error or no answer within timeoutMs refuses.
import http from 'node:http';
import https from 'node:https';
import { syncTypeError } from '../engine/errors.js';
import { PROXY_DEFAULTS } from './options.js';

const DEFAULT_TIMEOUT_MS = 5000;

export function authorizeUrl(url, { credentialHeaders = PROXY_DEFAULTS.credentialHeaders, timeoutMs = DEFAULT_TIMEOUT_MS } = {}) {
  let target;
  try {
    target = new URL(url);
  } catch {
    throw syncTypeError('invalid-options', 'authorizeUrl() needs an absolute http(s) URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw syncTypeError('invalid-options', 'authorizeUrl() needs an http: or https: URL');
  const transport = target.protocol === 'https:' ? https : http;
  return ({ kind, threadId, headers }) => new Promise((resolve) => {
    const ask = { 'x-agui-thread': encodeURIComponent(threadId), 'x-agui-access': kind };
    for (const name of credentialHeaders) if (headers[name] !== undefined) ask[name] = headers[name];
    const req = transport.request(target, { method: 'GET', headers: ask, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode >= 200 && res.statusCode <= 299);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}
