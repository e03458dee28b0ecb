// createStateSyncProxy() options: checked once (an AguiSyncError 'invalid-options',
// also a TypeError, for a wrong one) and frozen into the proxy's configuration.
import { checkEditPolicy } from '../shared/edit-policy.js';
import { syncTypeError } from '../engine/errors.js';
import { checkStore } from '../server/store/contract.js';
import { promptContextOption } from './prompt-context.js';
import { flakySegmentsOption } from './flaky-segments.js';

const MiB = 1024 * 1024;

/** Defaults; every limit is per proxy unless its name says otherwise. */
export const PROXY_DEFAULTS = Object.freeze({
  graceMs: 30000, // a broken client connection keeps the upstream run this long
  heartbeatMs: 5000, // ": hb <seq>" to every attached client
  threadIdleMs: 10 * 60 * 1000, // a thread with no run for this long is forgotten
  maxThreads: 1000,
  maxRuns: 512, // live runs and finished ones still kept for resumption
  maxRunBufferBytes: 4 * MiB, // sent events kept per run for Last-Event-ID
  maxBufferedBytes: 64 * MiB, // the same, all runs together
  maxRunEvents: 100000, // with a Redis store: events kept per run in its stored log (and maxRunBufferBytes)
  runLeaseMs: 5000, // with a Redis store: a run whose holder has not renewed its lease for this long is lost
  maxBodyBytes: 4 * MiB, // a RunAgentInput
  bodyTimeoutMs: 10000,
  maxClientQueueBytes: 16 * MiB, // unsent bytes before a slow client is cut (it resumes)
  maxRunClients: 64, // connections attached to one run (its starter, resumes, attaches)
  upstreamTimeoutMs: 30000, // until the upstream's response head
  maxEventBytes: 8 * MiB, // one upstream SSE event
  maxStateBytes: 64 * MiB,
  grantTtlMs: 60 * 60 * 1000, // a requester the backend accepted for a thread is authorized for it this long (renewed by each 2xx)
  // Identity the upstream needs (credentials, tracing, language); nothing else leaves the host.
  forwardHeaders: Object.freeze(['authorization', 'cookie', 'accept-language', 'traceparent', 'tracestate']),
  // Which of them say who the requester is (SECURITY.md): a grant is for these values.
  credentialHeaders: Object.freeze(['authorization', 'cookie']),
});

const NUMBER_OPTIONS = Object.keys(PROXY_DEFAULTS).filter((name) => typeof PROXY_DEFAULTS[name] === 'number');

// StateEmitter options a proxy's thread emitters may take (initialState and epoch are the proxy's).
const EMITTER_PASSTHROUGH = new Set([
  'digestEvery', 'guardedPaths', 'testAll', 'snapshotRatio', 'replayMaxEvents', 'replayMaxBytes', 'maxDepth', 'editHistory', 'ackHistory',
]);
// Thread emitters keep a smaller replay buffer than the emitter's default 4 MiB: there may be maxThreads of them.
const EMITTER_DEFAULTS = Object.freeze({ replayMaxBytes: MiB });

const KNOWN = new Set([...NUMBER_OPTIONS, 'upstream', 'forwardHeaders', 'credentialHeaders', 'authorize', 'emitter', 'edits', 'onError', 'store', 'promptContext', 'flakySegments']);

// Headers that describe one hop or the proxy's own conversation: never forwarded, whatever the list says.
const NEVER_FORWARDED = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host',
  'content-length', 'content-type', 'accept', 'expect', 'last-event-id', 'proxy-authorization',
]);

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]{1,64}$/;

function upstreamUrl(value) {
  let url;
  try {
    url = new URL(value);
  } catch {
    throw syncTypeError('invalid-options', 'createStateSyncProxy() option upstream must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw syncTypeError('invalid-options', `createStateSyncProxy() option upstream must be http: or https:, got ${url.protocol}`);
  }
  return url;
}

function headerList(value) {
  if (!Array.isArray(value) || !value.every((name) => typeof name === 'string')) {
    throw syncTypeError('invalid-options', 'createStateSyncProxy() option forwardHeaders must be an array of header names');
  }
  const names = value.map((name) => name.trim().toLowerCase());
  for (const name of names) {
    if (!HEADER_NAME.test(name)) throw syncTypeError('invalid-options', `forwardHeaders: ${JSON.stringify(name)} is not a header name`);
    if (NEVER_FORWARDED.has(name) || name.startsWith('x-agui-')) {
      throw syncTypeError('invalid-options', `forwardHeaders: ${name} belongs to one hop or to the proxy and is never forwarded`);
    }
  }
  return Object.freeze([...new Set(names)]);
}

function emitterPassthrough(value) {
  if (value === undefined) return EMITTER_DEFAULTS;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw syncTypeError('invalid-options', 'createStateSyncProxy() option emitter must be an object');
  }
  for (const key of Object.keys(value)) {
    if (!EMITTER_PASSTHROUGH.has(key)) throw syncTypeError('invalid-options', `createStateSyncProxy() option emitter.${key} is not supported`);
  }
  return Object.freeze({ ...EMITTER_DEFAULTS, ...value }); // createStateEmitter checks the values
}

/** The proxy's configuration: PROXY_DEFAULTS overridden by `options`, upstream as a URL. */
export function proxyOptions(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw syncTypeError('invalid-options', 'createStateSyncProxy() needs options with an upstream URL');
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw syncTypeError('invalid-options', `createStateSyncProxy(): unknown option ${JSON.stringify(key)}`);
  }
  const config = { ...PROXY_DEFAULTS };
  for (const name of NUMBER_OPTIONS) {
    const value = options[name];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw syncTypeError('invalid-options', `createStateSyncProxy() option ${name} must be a positive integer`);
    }
    config[name] = value;
  }
  config.upstream = upstreamUrl(options.upstream);
  if (options.forwardHeaders !== undefined) config.forwardHeaders = headerList(options.forwardHeaders);
  // A credential the backend never sees cannot be what it judged: the default keeps those forwarded,
  // a list given says what it means.
  if (options.credentialHeaders === undefined) {
    config.credentialHeaders = Object.freeze(PROXY_DEFAULTS.credentialHeaders.filter((name) => config.forwardHeaders.includes(name)));
  } else {
    config.credentialHeaders = headerList(options.credentialHeaders);
    for (const name of config.credentialHeaders) {
      if (!config.forwardHeaders.includes(name)) throw syncTypeError('invalid-options', `credentialHeaders: ${name} is not in forwardHeaders`);
    }
  }
  // The deployer's own check ({ kind, threadId, headers }) -> true to authorize; anything else refuses.
  if (options.authorize !== undefined && typeof options.authorize !== 'function') {
    throw syncTypeError('invalid-options', 'createStateSyncProxy() option authorize must be a function');
  }
  config.authorize = options.authorize ?? null;
  config.emitter = emitterPassthrough(options.emitter);
  // The policy clients' edits (forwardedProps.stateSync.edits) are judged by: { ownership, onConflict }.
  config.edits = checkEditPolicy(options.edits, 'createStateSyncProxy() option edits');
  if (options.onError !== undefined && typeof options.onError !== 'function') {
    throw syncTypeError('invalid-options', 'createStateSyncProxy() option onError must be a function');
  }
  config.onError = options.onError ?? null;
  // Thread emitters bound to their threadId in this store (memoryStore(), redisStore()): restarts and other instances continue them.
  config.store = options.store === undefined ? null : checkStore(options.store, 'createStateSyncProxy() option store');
  config.promptContext = promptContextOption(options.promptContext);
  // Snapshots per update for a segment (connection type) whose snapshot tax passes break-even: null (off) | { window, breakEven }.
  config.flakySegments = flakySegmentsOption(options.flakySegments);
  return Object.freeze(config);
}
