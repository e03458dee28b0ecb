#!/usr/bin/env node
// agui-state-sync-proxy: puts agui-state-sync sequencing, resumable streams
// and a reconnect grace period in front of any AG-UI agent.
//   npx agui-state-sync-proxy --upstream http://127.0.0.1:8000/agent [--host 127.0.0.1] [--port 8790]
//     [--own /proposal=agent ...] [--on-conflict agent-wins|user-wins] [--redis redis://host:6379]
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { createStateSyncProxy, PROXY_DEFAULTS } from '../src/proxy.js';
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
  --redis URL             keep each thread's emitter in Redis (redis:// or rediss://; needs the npm
                          package \`redis\`): a restarted proxy, or another one on the same Redis,
                          continues the thread's epoch and seq, and clients catch up by replay
  --redis-prefix PREFIX   the key prefix in Redis (default agui:)
  --help                  this text

POST a RunAgentInput to any path: the run is forwarded to the upstream and its
events come back sequenced, with an SSE id on each. A reconnect with
Last-Event-ID resumes the run; POST with X-AGUI-Abort: <runId> aborts it.`;

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
        redis: { type: 'string' },
        'redis-prefix': { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }).values;
  } catch (error) {
    return fail(error.message);
  }
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
      ...(args['forward-header'] && { forwardHeaders: args['forward-header'] }),
      edits: editPolicy(args),
      ...(args['prompt-context'] && { promptContext: true }),
      onError: (error) => process.stderr.write(`agui-state-sync-proxy: ${error.code}: ${error.message}\n`),
    });
  } catch (error) {
    return fail(error.message);
  }
  const server = createServer(proxy);
  server.on('error', (error) => {
    process.stderr.write(`agui-state-sync-proxy: ${error.message}\n`);
    process.exit(1);
  });
  server.listen(port, args.host, () => {
    const { address, port: bound } = server.address();
    const host = address.includes(':') ? `[${address}]` : address;
    const durable = store ? ` (threads kept in Redis at ${new URL(args.redis).host})` : '';
    process.stdout.write(`agui-state-sync-proxy listening on http://${host}:${bound}/ -> ${args.upstream}${durable}\n`);
  });
  const stop = () => {
    proxy.close();
    server.close(() => (store ? store.close() : Promise.resolve()).finally(() => process.exit(0)));
    server.closeAllConnections?.();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main();
