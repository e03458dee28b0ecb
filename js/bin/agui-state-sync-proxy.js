#!/usr/bin/env node
// agui-state-sync-proxy: puts agui-state-sync sequencing, resumable streams
// and a reconnect grace period in front of any AG-UI agent.
//   npx agui-state-sync-proxy --upstream http://127.0.0.1:8000/agent [--host 127.0.0.1] [--port 8790]
//     [--own /proposal=agent ...] [--on-conflict agent-wins|user-wins] [--redis redis://host:6379]
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { authorizeUrl, createOpsHandler, createStateSyncProxy, PROXY_DEFAULTS } from '../src/proxy.js';
import { redisStore } from '../src/server.js';

const USAGE = `usage: agui-state-sync-proxy --upstream URL [options]

  --upstream URL          the AG-UI agent endpoint (http: or https:); required
  --host HOST             address to listen on (default 127.0.0.1)
  --port PORT             port to listen on (default 8790; 0 picks a free one)
  --grace-ms MS           how long a run outlives a broken client connection (default ${PROXY_DEFAULTS.graceMs})
  --forward-header NAME   a client header to forward upstream; repeat it (default: ${PROXY_DEFAULTS.forwardHeaders.join(', ')})
  --own POINTER=OWNER     who owns a part of the state, for clients' edits: agent, user or shared;
                          repeat it (default: everything shared; docs/wire.md section 9)
  --on-conflict POLICY    agent-wins (default) or user-wins: whose write stands when a client's
                          edit and the agent's meet on a shared path
  --prompt-context        add the run's state, rendered prompt-safe, as a RunAgentInput.context entry
  --flaky-segments        a STATE_SNAPSHOT per update for a connection type whose snapshot tax passes
                          break-even, back to deltas with hysteresis
                          (docs/proxy.md#snapshots-for-a-flaky-segment)
  --flaky-window N        with --flaky-segments: updates of a connection type per decision (default 100)
  --flaky-break-even X    with --flaky-segments: the switch threshold in (0, 1] (default (S - d) / S)
  --redis URL             keep each thread's emitter in Redis (redis:// or rediss://; needs the npm
                          package \`redis\`): a restarted proxy, or another one on the same Redis,
                          continues the thread's epoch and seq, and clients catch up by replay;
                          each run's events are kept there too: any instance resumes it
  --redis-prefix PREFIX   the key prefix in Redis (default agui:)
  --run-lease-ms MS       with --redis: a run whose instance has not renewed its lease for this
                          long is lost (its clients get RUN_ERROR run-lost; default ${PROXY_DEFAULTS.runLeaseMs})
  --ops-port PORT         serve GET /healthz, /readyz and /metrics (Prometheus; needs the npm
                          package \`prom-client\`) on this port of --ops-host (0 picks a free one)
  --ops-host HOST         address of the operations port (default 127.0.0.1, whatever --host is)
  --authorize-url URL     ask this endpoint whether a requester the upstream has not accepted yet
                          may read a thread: a GET with their credentials, X-AGUI-Thread and
                          X-AGUI-Access; 2xx authorizes (SECURITY.md)
  --drain-ms MS           on SIGTERM: stop taking runs, let running ones end for at most this
                          long, then exit (default: --grace-ms)
  --help                  this text

POST a RunAgentInput to any path: the run is forwarded to the upstream and its
events come back sequenced, with an SSE id on each. A reconnect with
Last-Event-ID resumes the run; POST with X-AGUI-Abort: <runId> aborts it.
Errors and lifecycle events are logged to stderr as JSON lines.`;

function fail(message) {
  process.stderr.write(`agui-state-sync-proxy: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function integer(name, text, min) {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min) fail(`--${name} must be an integer >= ${min}`);
  return value;
}

function readArgs() {
  try {
    return parseArgs({
      options: {
        upstream: { type: 'string' },
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'string', default: '8790' },
        'grace-ms': { type: 'string' },
        'forward-header': { type: 'string', multiple: true },
        own: { type: 'string', multiple: true },
        'on-conflict': { type: 'string' },
        'prompt-context': { type: 'boolean', default: false },
        'flaky-segments': { type: 'boolean', default: false },
        'flaky-window': { type: 'string' },
        'flaky-break-even': { type: 'string' },
        redis: { type: 'string' },
        'redis-prefix': { type: 'string' },
        'run-lease-ms': { type: 'string' },
        'ops-port': { type: 'string' },
        'ops-host': { type: 'string', default: '127.0.0.1' },
        'authorize-url': { type: 'string' },
        'drain-ms': { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }).values;
  } catch (error) {
    return fail(error.message);
  }
}

// --flaky-segments with its window and threshold (createStateSyncProxy checks the values), or undefined.
function flakySegments(args) {
  const window = args['flaky-window'];
  const breakEven = args['flaky-break-even'];
  if (!args['flaky-segments']) {
    if (window !== undefined || breakEven !== undefined) fail('--flaky-window and --flaky-break-even need --flaky-segments');
    return undefined;
  }
  return {
    ...(window !== undefined && { window: integer('flaky-window', window, 1) }),
    ...(breakEven !== undefined && { breakEven: Number(breakEven) }),
  };
}

// The edits policy of --own / --on-conflict (createStateSyncProxy checks the values).
function editPolicy(args) {
  const ownership = {};
  for (const rule of args.own ?? []) {
    const at = rule.lastIndexOf('='); // owners never hold '=', pointers may
    if (at < 0) fail(`--own takes POINTER=OWNER, got ${JSON.stringify(rule)}`);
    ownership[rule.slice(0, at)] = rule.slice(at + 1);
  }
  return { ownership, ...(args['on-conflict'] !== undefined && { onConflict: args['on-conflict'] }) };
}

// The store of --redis: checked here, so a typo exits 2 instead of failing every run.
function storeOf(args) {
  if (args.redis === undefined) {
    if (args['redis-prefix'] !== undefined) fail('--redis-prefix needs --redis');
    return null;
  }
  let url;
  try {
    url = new URL(args.redis);
  } catch {
    return fail(`--redis must be a URL, got ${JSON.stringify(args.redis)}`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') fail('--redis must be a redis:// or rediss:// URL');
  return redisStore({ url: args.redis, ...(args['redis-prefix'] !== undefined && { prefix: args['redis-prefix'] }) });
}

/** One structured log line on stderr (what a log shipper parses). */
function log(level, event, fields = {}) {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, event, ...fields })}\n`);
}

function listen(server, port, host) {
  return new Promise((resolve) => server.listen(port, host, () => resolve(server.address())));
}

function urlOf({ address, port }) {
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}/`;
}

// SIGTERM / SIGINT: stop accepting, let live runs end (at most drainMs; their
// clients may resume on another instance), then free everything and exit 0.
function onStop(servers, proxy, store, drainMs) {
  let stopping = false;
  return (signal) => {
    if (stopping) return;
    stopping = true;
    log('info', 'draining', { signal, liveRuns: proxy.stats().liveRuns, drainMs });
    servers.agent.close();
    const deadline = new Promise((resolve) => setTimeout(resolve, drainMs, 'deadline').unref());
    Promise.race([proxy.drain().then(() => 'idle'), deadline]).then((why) => {
      log('info', 'stopped', { after: why, liveRuns: proxy.stats().liveRuns });
      proxy.close();
      servers.agent.closeAllConnections?.();
      servers.ops?.close();
      servers.ops?.closeAllConnections?.();
      return store ? store.close() : undefined;
    }).finally(() => process.exit(0));
  };
}

function main() {
  const args = readArgs();
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (!args.upstream) fail('--upstream is required');
  const port = integer('port', args.port, 0);
  if (port > 65535) fail('--port must be at most 65535');
  let proxy;
  const store = storeOf(args);
  try {
    proxy = createStateSyncProxy({
      ...(store && { store }),
      upstream: args.upstream,
      ...(args['grace-ms'] !== undefined && { graceMs: integer('grace-ms', args['grace-ms'], 1) }),
      ...(args['run-lease-ms'] !== undefined && { runLeaseMs: integer('run-lease-ms', args['run-lease-ms'], 1) }),
      ...(args['forward-header'] && { forwardHeaders: args['forward-header'] }),
      ...(args['authorize-url'] !== undefined && { authorize: authorizeUrl(args['authorize-url']) }),
      edits: editPolicy(args),
      ...(args['prompt-context'] && { promptContext: true }),
      flakySegments: flakySegments(args),
      onError: (error) => log('error', 'run-error', { code: error.code, message: error.message }),
    });
  } catch (error) {
    return fail(error.message);
  }
  const opsPort = args['ops-port'] === undefined ? null : integer('ops-port', args['ops-port'], 0);
  if (opsPort !== null && opsPort > 65535) fail('--ops-port must be at most 65535');
  const graceMs = args['grace-ms'] === undefined ? PROXY_DEFAULTS.graceMs : integer('grace-ms', args['grace-ms'], 1);
  const drainMs = args['drain-ms'] === undefined ? graceMs : integer('drain-ms', args['drain-ms'], 0);
  serve(args, proxy, store, { port, opsPort, drainMs }).catch((error) => {
    log('error', 'startup-failed', { code: error.code, message: error.message });
    process.exit(1);
  });
}

async function serve(args, proxy, store, { port, opsPort, drainMs }) {
  const servers = { agent: createServer(proxy), ops: null };
  servers.agent.on('error', (error) => {
    log('error', 'listen-failed', { message: error.message });
    process.exit(1);
  });
  const bound = await listen(servers.agent, port, args.host);
  const durable = store ? ` (threads kept in Redis at ${new URL(args.redis).host})` : '';
  process.stdout.write(`agui-state-sync-proxy listening on ${urlOf(bound)} -> ${args.upstream}${durable}\n`);
  if (opsPort !== null) {
    servers.ops = createServer(await createOpsHandler(proxy, { store }));
    process.stdout.write(`agui-state-sync-proxy operations on ${urlOf(await listen(servers.ops, opsPort, args['ops-host']))}\n`);
  }
  const stop = onStop(servers, proxy, store, drainMs);
  // Repeated signals while draining are ignored: the drain has its own deadline.
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main();
