// Shared set-up of the proxy suites (not a test file): an upstream from
// tests/support/upstreams.mjs behind createStateSyncProxy on a real socket,
// clients that record what they see, and a small SSE reader for raw streams.
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { startUpstream } from '../support/upstreams.mjs';
import { until } from '../support/until.mjs';
import { jsDir, pkg, plain } from './support.mjs';

export const proxyModule = await import(join(jsDir, 'src', 'proxy.js'));
export const { createStateSyncProxy } = proxyModule;
const { connectStateSync, createStateSync } = pkg;

export const FAST = { initialMs: 5, maxMs: 20, jitter: 0 };

/** The faulty link the seeded proxy suites run over (tests/support/fault-link.mjs). */
export const FAULTS = {
  cutProbability: 0.8,
  cutAfterBytes: [200, 2500],
  stallProbability: 0.02,
  stallMs: 40,
  delayMs: [0, 1],
  chunkBytes: [1, 900],
};

/** Serves `handler` on 127.0.0.1: { url(path), port, close() }. */
export async function serve(handler) {
  const server = createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    port,
    url: (path = '/agent') => `http://127.0.0.1:${port}${path}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * An upstream (startUpstream(upstream)) behind a proxy (createStateSyncProxy(proxy)).
 * Returns { upstream, proxy, url(path), errors (onError), close() }.
 */
export async function stack({ upstream: upstreamOptions = {}, proxy: proxyOptions = {} } = {}) {
  return stackOn(await startUpstream(upstreamOptions), proxyOptions);
}

/** A proxy (with `proxyOptions`) in front of an upstream that is already listening; as stack(). */
export async function stackOn(upstream, proxyOptions = {}) {
  const errors = [];
  const proxy = createStateSyncProxy({ upstream: upstream.url, onError: (error) => errors.push(error), ...proxyOptions });
  const server = await serve(proxy);
  return {
    upstream,
    proxy,
    errors,
    url: server.url,
    port: server.port,
    async close() {
      proxy.close();
      await server.close();
      await upstream.close();
    },
  };
}

/** A RunAgentInput. */
export function runInput(threadId, runId, extra = {}) {
  return { threadId, runId, state: {}, messages: [], tools: [], context: [], forwardedProps: {}, ...extra };
}

/**
 * A createStateSync + connectStateSync client of one run. Records every
 * outcome, the non-state events, the raw bytes, and each state it held while
 * 'synced'. Returns { sync, done, events, outcomes, synced, bytes, text() }.
 */
export async function connectClient(url, input, { sync, connect = {} } = {}) {
  const client = sync ?? (await createStateSync());
  const record = { sync: client, events: [], outcomes: [], synced: [], bytes: 0, chunks: [] };
  const off = client.subscribe(() => {
    if (client.status === 'synced') record.synced.push(plain(client.state));
  });
  const connection = connectStateSync(client, {
    url,
    body: () => input,
    backoff: FAST,
    onOutcome: (outcome) => {
      record.outcomes.push(outcome);
      if (outcome.kind === 'event') record.events.push(outcome.event);
    },
    onChunk: (bytes) => {
      record.bytes += bytes.length;
      record.chunks.push(Buffer.from(bytes));
    },
    ...connect,
  });
  record.close = connection.close;
  record.done = connection.done.finally(off);
  record.text = () => Buffer.concat(record.chunks).toString('utf8');
  return record;
}

/** True if `state` deep-equals one of `states`. */
export function isOneOf(state, states) {
  return states.some((s) => isDeepStrictEqual(state, s));
}

/** The events of a parsed SSE text: [{ id, data (parsed), comment }] (comments as { comment }). */
export function parseSse(text) {
  const events = [];
  for (const block of text.split('\n\n')) {
    if (!block) continue;
    const event = { id: undefined, data: undefined };
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) event.comment = line.slice(1).trim();
      else if (line.startsWith('id: ')) event.id = line.slice(4);
      else if (line.startsWith('data: ')) event.data = JSON.parse(line.slice(6));
    }
    events.push(event);
  }
  return events;
}

/**
 * POSTs `input` to `url` and reads the SSE response until `stop(events)` says
 * so (then aborts the connection) or it ends: { status, headers, text, events }.
 * Only complete events are kept.
 */
export async function readStream(url, { input, headers = {}, method = 'POST', stop = () => false, onText = () => {} } = {}) {
  const controller = new AbortController();
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: method === 'POST' ? JSON.stringify(input) : undefined,
    signal: controller.signal,
  });
  let text = '';
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      onText(text);
      const complete = text.slice(0, text.lastIndexOf('\n\n') + 2);
      if (stop(parseSse(complete).filter((e) => e.data !== undefined))) {
        text = complete;
        controller.abort();
        break;
      }
    }
  } catch (error) {
    if (error.name !== 'AbortError') throw error;
  }
  text = text.slice(0, text.lastIndexOf('\n\n') + 2);
  return { status: response.status, headers: response.headers, text, events: parseSse(text).filter((e) => e.data !== undefined) };
}

/**
 * The response with its body teed: what arrives is appended to `entry.text`
 * (kept when the connection is cut), the caller reads the returned copy.
 */
export function keepBody(response, entry) {
  if (!response.body) return response;
  const [mine, theirs] = response.body.tee();
  (async () => {
    const reader = mine.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        entry.text += decoder.decode(value, { stream: true });
      }
    } catch {
      // the connection was cut or aborted: what arrived is kept
    }
  })();
  return new Response(theirs, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * A subscriber recording what one runAgent() / connectAgent() call shows it:
 * { seen: { types, events, errors, violations }, subscriber }. With
 * `history()` (the states the upstream held), every state agent.state takes
 * while 'synced' that is not one of them is a violation.
 */
export function eventWatcher(agent, history = null) {
  const seen = { types: [], events: [], errors: [], violations: [] };
  const subscriber = {
    onEvent: ({ event }) => {
      seen.types.push(event.type);
      seen.events.push(plain(event));
    },
    onRunFailed: ({ error }) => {
      seen.errors.push(error);
    },
  };
  if (history !== null) {
    subscriber.onStateChanged = () => {
      if (agent.stateSync.status !== 'synced') return;
      const state = plain(agent.state);
      if (!isOneOf(state, history())) seen.violations.push(state);
    };
  }
  return { seen, subscriber };
}

/** Non-state events of an event list, without the proxy's own CUSTOM notices. */
export function upstreamLike(events) {
  return events.filter((e) => e.type !== 'STATE_SNAPSHOT' && e.type !== 'STATE_DELTA' && !(e.type === 'CUSTOM' && String(e.name).startsWith('agui-state-sync.')));
}

/**
 * A plain AG-UI upstream that answers each run with `eventsOf(input, paid)` and
 * counts the runs whose input carries a resume (`effects`: the effect an
 * approval authorizes), for the approval gate's tests.
 */
export async function resumeCountingUpstream(eventsOf) {
  const effects = [];
  const server = await serve((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      const input = JSON.parse(body);
      const paid = Array.isArray(input.resume) && input.resume.length > 0;
      if (paid) effects.push(input.runId);
      const run = { threadId: input.threadId, runId: input.runId };
      const events = [{ type: 'RUN_STARTED', ...run }, ...eventsOf(input, paid), { type: 'RUN_FINISHED', ...run }];
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(''));
    });
  });
  return { effects, url: server.url('/agent'), close: () => server.close() };
}

export { until };

export { createStateSync };

const PROXY_BIN = join(jsDir, 'bin', 'agui-state-sync-proxy.js');

/**
 * The agui-state-sync-proxy CLI as a user runs it (a child process): its
 * agent URL once it listens (`url`, on `path`), `output()` (stdout and
 * stderr so far), and `stop()`, which sends SIGTERM and waits for the exit code.
 */
export async function startProxyCli(args, { path = 'agent' } = {}) {
  const child = spawn(process.execPath, [PROXY_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  child.stderr.on('data', (chunk) => { out += chunk; });
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(new URL(path, match[1]).href);
    });
    exited.then((code) => reject(new Error(`agui-state-sync-proxy exited ${code}:\n${out}`)));
  });
  return {
    url,
    child,
    output: () => out,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The value of one sample (`name` with its labels, as Prometheus writes it) in a scraped text, or undefined. */
export function metric(text, name) {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l === name);
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** The sum of every sample of `name` whatever its labels (0 when none). */
export function metricSum(text, name) {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** A CLI started with --ops-port: its /metrics text, scraped now. */
export async function scrapeCli(cli) {
  const ops = await until(() => /operations on (http:\/\/\S+)/.exec(cli.output())?.[1], 'the operations port');
  return (await fetch(new URL('/metrics', ops))).text();
}

/** The CLI run to its exit (a bad argument): { status, stdout, stderr }. */
export function runProxyCli(args) {
  return spawnSync(process.execPath, [PROXY_BIN, ...args], { encoding: 'utf8' });
}
