// The clients of bench_fleet.mjs, all in the bench's process: each is a real
// engine (createStateSync) fed by its own HTTP connection to one proxy
// instance, either the run's starter (POST of a RunAgentInput) or attached to
// the thread's running run (GET with X-AGUI-Attach, docs/wire.md section 8);
// or 'direct', a run of the upstream's own with no proxy (the floor: its
// stream is not sequenced, so the engine holds it 'unverified').
// A client records the delivery latency of every stamped event it gets while
// the bench measures (receive time minus the upstream's send time, on the
// monotonic clock), and what the end check needs: its status, state, the chat
// text it saw, RUN_FINISHED, and any error or resync.
import { request } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import { nowUs } from './bench_fleet_upstream.mjs';

/** A client of `threadId` on `url` ('starter' or 'attach'); `samples` is the array its latencies (µs) go to. */
export function fleetClient(createStateSync, { url, threadId, runId, kind, samples }) {
  return createStateSync().then((sync) => ({
    sync, url, threadId, runId, kind, samples,
    measuring: false, lastT: 0, text: '', finished: false, problems: [], status: null, attach: null, done: null,
  }));
}

/**
 * Opens the client's stream; resolves once it is synced (its first state; a
 * 'direct' client, on the upstream itself, once it holds one), rejects on a failed request.
 */
export function openStream(client) {
  const attach = client.kind === 'attach'; // else a POST of a run
  const headers = { accept: 'text/event-stream', ...(attach ? { 'x-agui-attach': client.threadId } : { 'content-type': 'application/json' }) };
  return new Promise((resolve, reject) => {
    let ended;
    client.done = new Promise((r) => { ended = r; });
    const req = request(client.url, { method: attach ? 'GET' : 'POST', headers, agent: false }, (res) => {
      client.status = res.statusCode;
      client.attach = res.headers['x-agui-attach'] ?? null;
      if (res.statusCode !== 200) {
        let body = '';
        res.on('data', (chunk) => { body += chunk; });
        res.on('end', () => reject(new Error(`${client.kind} ${client.threadId}: HTTP ${res.statusCode} ${body}`)));
        return;
      }
      res.on('data', (chunk) => {
        receive(client, chunk, nowUs());
        if (client.sync.status === 'synced' || (client.kind === 'direct' && client.sync.state != null)) resolve();
      });
      res.on('end', () => {
        client.problems.push(...client.sync.end().filter(bad).map(describe));
        ended();
      });
      res.on('error', (error) => { client.problems.push(error.message); ended(); });
    });
    req.on('error', (error) => { client.problems.push(error.message); reject(error); ended(); });
    client.req = req;
    req.end(attach ? undefined : JSON.stringify(runInput(client.threadId, client.runId)));
  });
}

function runInput(threadId, runId) {
  return { threadId, runId, state: {}, messages: [], tools: [], context: [], forwardedProps: {} };
}

const bad = (outcome) => outcome.kind === 'error' || outcome.kind === 'resync';
const describe = (outcome) => `${outcome.kind} ${outcome.code ?? outcome.reason}: ${outcome.message ?? outcome.detail}`;

// One chunk: fed to the engine; each stamped event it completes is a latency sample.
function receive(client, chunk, at) {
  for (const outcome of client.sync.feed(chunk)) {
    if (bad(outcome)) client.problems.push(describe(outcome));
    else if (outcome.kind === 'applied') sampleState(client, outcome.state.t, at); // a delta, or a snapshot the emitter chose
    else if (outcome.kind === 'event') sampleEvent(client, outcome.event, at);
  }
}

function sampleState(client, t, at) {
  if (t === client.lastT || t === 0) return; // the first state, a catch-up or the last change (done: true): no new stamp
  client.lastT = t;
  if (client.measuring) client.samples.push(at - t);
}

function sampleEvent(client, event, at) {
  if (event.type === 'RUN_FINISHED') client.finished = true;
  if (event.type !== 'TEXT_MESSAGE_CONTENT') return;
  client.text += event.delta;
  if (client.measuring) client.samples.push(at - Number.parseInt(event.delta, 10));
}

/** What is wrong with a client at the end, given the upstream's final { state, text } of its thread ([] if nothing). */
export function endProblems(client, final) {
  const problems = [...client.problems];
  if (client.kind === 'attach' && client.attach !== 'run') problems.push(`attached to ${client.attach}, not the running run`);
  if (client.sync.status !== (client.kind === 'direct' ? 'unverified' : 'synced')) problems.push(`status ${client.sync.status}`);
  if (!final) problems.push('the upstream ran no run of its thread');
  else {
    if (!isDeepStrictEqual(JSON.parse(JSON.stringify(client.sync.state)), final.state)) problems.push(`state ${JSON.stringify(client.sync.state)} != ${JSON.stringify(final.state)}`);
    if (client.text !== final.text) problems.push(`chat text differs (${client.text.length} vs ${final.text.length} chars)`);
  }
  if (!client.finished) problems.push('no RUN_FINISHED');
  return problems;
}
