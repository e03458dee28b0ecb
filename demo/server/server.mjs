#!/usr/bin/env node
// The demo server: static page + an embedded scripted AG-UI agent + a fault
// injector on its SSE stream. No framework, no LLM, no API keys.
//
//   node server/server.mjs [--port 8787] [--host 127.0.0.1] [--step-ms 180]
//                          [--preset clean|lossy|train] [--seed N] [--drop P] [--duplicate P]
//                          [--reorder P] [--latency-ms N] [--jitter-ms N]
//                          [--disconnect-every-sec N] [--outage-ms N]
//
// Endpoints
//   POST /agent          RunAgentInput -> text/event-stream (AG-UI events). The user's edits in
//                        forwardedProps.stateSync.edits go to the emitter first (acks in
//                        metadata.acks); a new runId on a finished thread is a follow-up run. A reconnecting
//                        client says where it is (X-AGUI-State-Seq/-Epoch/-Resync-Reason or
//                        Last-Event-ID headers, or forwardedProps.stateSync) and gets the
//                        package's catchUp(): nothing, a replay of missed deltas, or a snapshot.
//                        A new runId with a parentRunId naming an earlier run of the thread is a
//                        branch: the agent starts again from that run's end state, read from the
//                        thread's log, in a new epoch (400: no such run; 409: a run is still going).
//   GET  /agent with X-AGUI-Attach: <threadId> (and the X-AGUI-State-* headers, no body): attach, as
//                        the package's proxy answers it (docs/wire.md section 8): a page reloaded mid-run
//                        or a second page on the thread gets the running run's RUN_STARTED, its own
//                        catch-up, the run's other events so far (the answer being streamed, from its
//                        start), then live (X-AGUI-Attach: run); with no run going, RUN_STARTED, the
//                        catch-up, a heartbeat and RUN_FINISHED of a run of its own (X-AGUI-Attach: idle)
//   GET  /log?threadId[&from=N]  the thread's log (JSON Lines, agui-state-sync/log's serializeLog):
//                        every event of every run as the agent wrote it, before the fault
//                        injector; from=N: a log of the events from index N on (X-Log-Length: all)
//   GET  /truth?threadId the agent's own state digest (stateDigest), seq, recent digests, faults,
//                        and every connection's catch-up (where the client was, why, replay or snapshot)
//   POST /approve        {threadId, approval, pane} -> consumeApproval(approval, agent state): verified as
//                        verifyApproval does and recorded once (the same approval again is not paid twice)
//   GET  /faults         current fault settings and presets; POST /faults to change them live
import { createReadStream, existsSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { AgentRun, RunRefused } from './agent.mjs';
import { DEFAULTS, normalizeFaults, PRESETS } from './faults.mjs';
import * as pkg from './pkg.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) continue;
    const [k, v] = a.includes('=') ? a.slice(2).split(/=(.*)/s) : [a.slice(2), argv[++i]];
    out[k.replace(/-([a-z])/g, (_, c) => c.toUpperCase())] = v;
  }
  return out;
}

// Where the client's state is, as the package's catchUp() reads it: the
// resync headers when it sent them (as connectStateSync does), else
// RunAgentInput.forwardedProps.stateSync. A request with a body carries its
// activity positions in the body only (docs/wire.md section 11), so they come
// from there beside the headers, as the proxy reads them.
function clientPosition(req, input) {
  const headers = req.headers;
  if (input && headers['x-agui-state-seq'] === undefined && headers['last-event-id'] === undefined) return input;
  const position = pkg.readResyncRequest(req);
  if (position.activities === null && input) position.activities = pkg.readResyncRequest(input).activities;
  return { forwardedProps: { stateSync: position } };
}

const ATTACH = pkg.HEADER_ATTACH.toLowerCase();

// An attach to a thread this server does not have: a run of its own that ran nothing.
function answerIdleUnknown(res, threadId) {
  const ids = { threadId, runId: `attach-${Date.now().toString(36)}` };
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', [ATTACH]: 'idle' });
  res.end(`data: ${JSON.stringify({ type: 'RUN_STARTED', ...ids })}\n\ndata: ${JSON.stringify({ type: 'RUN_FINISHED', ...ids })}\n\n`);
}

export async function startServer(opts = {}) {
  const port = Number(opts.port ?? process.env.PORT ?? 8787);
  const host = opts.host ?? process.env.HOST ?? '127.0.0.1';
  const stepMs = Number(opts.stepMs ?? 180);
  const dist = path.resolve(opts.dist ?? path.join(HERE, '..', 'dist'));
  const quiet = Boolean(opts.quiet);
  let faults = normalizeFaults({
    ...(opts.preset ? { preset: opts.preset } : {}),
    ...Object.fromEntries(Object.keys(DEFAULTS).filter((k) => opts[k] !== undefined).map((k) => [k, opts[k]])),
  });
  await pkg.initEngine(); // stateDigest / verifyApproval are synchronous and need a loaded engine
  const runs = new Map();
  // POST /clock {paused}: holds every scripted agent before its next beat or word (a
  // presenter explaining a screen; a test that must know how far the agent got).
  const clock = { paused: false, held: new Set() };
  const log = (msg) => { if (!quiet) console.log(`[agent] ${msg}`); };

  const getRun = (threadId) => runs.get(String(threadId || ''));
  function gc() {
    const now = Date.now();
    for (const [id, run] of runs) {
      if (now - run.startedAt > 15 * 60 * 1000) { run.dispose(); runs.delete(id); }
    }
  }

  async function readJson(req, limit = 1 << 20) {
    let size = 0; const parts = [];
    for await (const c of req) { size += c.length; if (size > limit) throw new Error('body too large'); parts.push(c); }
    const text = Buffer.concat(parts).toString('utf8');
    return text ? JSON.parse(text) : {};
  }
  const sendJson = (res, code, body) => {
    res.writeHead(code, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  const creating = new Map(); // threadId -> Promise<AgentRun>
  async function runFor(threadId) {
    const existing = getRun(threadId);
    if (existing) return existing;
    if (!creating.has(threadId)) {
      gc();
      creating.set(threadId, AgentRun.create({ threadId, pkg, getFaults: () => faults, stepMs, clock, log: (m) => log(`${threadId}: ${m}`) })
        .then((run) => { runs.set(threadId, run); log(`${threadId}: new run ${run.runId}`); return run; })
        .finally(() => creating.delete(threadId)));
    }
    return creating.get(threadId);
  }

  // A tunnel: right after a cut, the network is gone for a while. False when the client left meanwhile.
  async function throughOutage(run, req) {
    const wait = run.outageUntil - Date.now();
    if (wait <= 0) return true;
    let closed = false; req.on('close', () => { closed = true; });
    await sleep(wait);
    return !closed;
  }

  async function handleAgent(req, res) {
    const input = await readJson(req);
    const threadId = typeof input.threadId === 'string' && input.threadId ? input.threadId : `thread-${Date.now()}`;
    const run = await runFor(threadId);
    if (!(await throughOutage(run, req))) return;
    await run.receive(input); // may refuse (RunRefused: a status, no stream)
    run.attach(res, clientPosition(req, input));
  }

  // X-AGUI-Attach: the thread's run as it stands (a thread this server never had is idle, with nothing to catch up).
  async function handleAttach(req, res) {
    const threadId = String(req.headers[ATTACH]);
    if (!/^[\w-]{1,100}$/.test(threadId)) return sendJson(res, 400, { error: 'X-AGUI-Attach must name a thread' });
    const run = getRun(threadId) ?? (await creating.get(threadId));
    if (!run) return answerIdleUnknown(res, threadId);
    if (!(await throughOutage(run, req))) return;
    run.attachClient(res, clientPosition(req, null));
  }

  const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.svg': 'image/svg+xml', '.png': 'image/png', '.json': 'application/json', '.ico': 'image/x-icon' };
  function serveStatic(req, res, pathname) {
    let rel = decodeURIComponent(pathname);
    if (rel.endsWith('/')) rel += 'index.html';
    const file = path.resolve(dist, '.' + path.posix.normalize(rel));
    if (!file.startsWith(dist + path.sep) && file !== dist) { res.writeHead(403); res.end(); return; }
    let target = file;
    if (!existsSync(target) || !statSync(target).isFile()) target = path.join(dist, 'index.html');
    if (!existsSync(target)) { res.writeHead(404, { 'content-type': 'text/plain' }); res.end('demo/dist is missing: run `make demo` (or `npm run build` in demo/)\n'); return; }
    res.writeHead(200, { 'content-type': TYPES[path.extname(target)] || 'application/octet-stream', 'cache-control': target.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache' });
    createReadStream(target).pipe(res);
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://localhost');
    try {
      if (req.method === 'POST' && url.pathname === '/agent') return await handleAgent(req, res);
      if (req.method === 'GET' && url.pathname === '/agent' && req.headers[ATTACH] !== undefined) return await handleAttach(req, res);
      if (req.method === 'GET' && url.pathname === '/truth') {
        const run = getRun(url.searchParams.get('threadId'));
        if (!run) return sendJson(res, 404, { error: 'no such thread' });
        return sendJson(res, 200, run.truthView());
      }
      if (req.method === 'GET' && url.pathname === '/log') {
        const run = getRun(url.searchParams.get('threadId'));
        if (!run) return sendJson(res, 404, { error: 'no such thread' });
        const from = Number(url.searchParams.get('from') ?? 0);
        if (!Number.isSafeInteger(from) || from < 0) return sendJson(res, 400, { error: 'from must be an integer >= 0' });
        res.writeHead(200, { 'content-type': 'application/jsonl; charset=utf-8', 'cache-control': 'no-store', 'x-log-length': String(run.thread.events.length) });
        return res.end(run.thread.text(from));
      }
      if (req.method === 'POST' && url.pathname === '/approve') {
        const body = await readJson(req);
        const run = getRun(body.threadId);
        if (!run) return sendJson(res, 404, { error: 'no such thread' });
        return sendJson(res, 200, await run.approve(body.approval, body.pane));
      }
      if (url.pathname === '/clock') {
        if (req.method === 'POST') {
          clock.paused = (await readJson(req)).paused === true;
          log(`clock: ${clock.paused ? 'paused' : 'running'}`);
          if (!clock.paused) {
            const held = [...clock.held];
            clock.held.clear();
            for (const run of held) if (runs.get(run.threadId) === run) run.resume();
          }
        }
        return sendJson(res, 200, { paused: clock.paused });
      }
      if (url.pathname === '/faults') {
        if (req.method === 'POST') {
          const body = await readJson(req);
          faults = normalizeFaults(body.preset ? { preset: body.preset, seed: body.seed ?? faults.seed } : body, body.preset ? DEFAULTS : faults);
          log(`faults: ${JSON.stringify(faults)}`);
        }
        return sendJson(res, 200, { faults, presets: PRESETS });
      }
      if (req.method === 'GET' || req.method === 'HEAD') return serveStatic(req, res, url.pathname);
      sendJson(res, 405, { error: 'method not allowed' });
    } catch (err) {
      if (!res.headersSent) sendJson(res, err instanceof RunRefused ? err.status : 400, { error: String(err && err.message || err) });
      else res.destroy();
    }
  });
  server.keepAliveTimeout = 1000;
  await new Promise((resolve, reject) => { server.once('error', reject); server.listen(port, host, resolve); });
  const addr = server.address();
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}/`;
  return {
    url,
    server,
    runs,
    close: () => new Promise((r) => { for (const run of runs.values()) run.dispose(); server.closeAllConnections?.(); server.close(() => r()); }),
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = parseArgs(process.argv.slice(2));
  const s = await startServer(args);
  console.log(`agui-state-sync demo: ${s.url}`);
  console.log(`  package: ${pkg.SOURCE}`);
  console.log('  open it in a browser; Ctrl-C stops the server');
  const stop = () => s.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
