// The sequencing proxy (agui-state-sync/proxy): sequencing for any AG-UI backend, with no change to
// the backend. createStateSyncProxy({ upstream }) is a Node (req, res) handler
// that forwards each RunAgentInput to the upstream agent, reads its SSE with
// the package's engine, re-stamps its state per thread with a StateEmitter
// (docs/wire.md section 8), passes every other event through, gives every
// event an SSE id so a broken connection resumes where it stopped, and keeps
// the upstream run alive for a grace period when a client's connection breaks.
// Clients' edits (forwardedProps.stateSync.edits) are judged by the thread's
// emitter before the run goes upstream, with the merged state as its `state`.
// Its units live beside it in proxy/: options, client-request, registry (threads, runs,
// bounds), thread (emitter, catch-up, re-stamping, edits), run-cursor (how a run's
// state events go on, the core's decision), run (the stream, grace,
// abort), relay (upstream outcomes -> events), upstream (the HTTP request),
// resume (Last-Event-ID), prompt-context (the promptContext option), event-log,
// sse-out, events, approvals (resume entries' approvals checked and consumed once),
// attach (X-AGUI-Attach: a client joins the thread's running run, or catches up),
// run-stream (a run's log and connections), and with a Redis store the runs'
// logs there: run-store (I/O), stored-run-log (the holder's writes),
// remote-run / remote-runs (another instance's runs, served here).
import { REPLAY_REASONS, RESYNC_REASONS, SNAPSHOT_REASONS } from '../engine/codes.js';
import { AguiSyncError, asCause, describeThrown, PREFIX, reportListenerError, syncError } from '../engine/errors.js';
import { forwardedInput, HEADER_ABORT, HEADER_ATTACH, header, readClientRequest } from './client-request.js';
import { serveAttach } from './attach.js';
import { EVENTS_LOST, runError, UPSTREAM_CONSISTENT, UPSTREAM_INCONSISTENT } from './events.js';
import { PROXY_DEFAULTS, proxyOptions } from './options.js';
import { withPromptContext } from './prompt-context.js';
import { Registry } from './registry.js';
import { Relay } from './relay.js';
import { RelayEngine } from './relay-engine.js';
import { approvalBook, carriesResume, judgeApprovals } from './approvals.js';
import { Run } from './run.js';
import { RemoteRuns } from './remote-runs.js';
import { runStoreFor } from './run-store.js';
import { StoredRunLog } from './stored-run-log.js';
import { randomUUID } from 'node:crypto';
import { RunCursor, upstreamStart } from './run-cursor.js';
import { after } from '../server/emitter-writes.js';
import { frameEvent, newStreamKey, SSE_HEAD } from './sse-out.js';
import { connectionTypeOf } from '../shared/resync-wire.js';
import { accepted, openUpstream, readRefusal, readUpstream } from './upstream.js';
import { Access } from './access.js';
import { FlakySegments } from './flaky-segments.js';
import { loadEmitterEngine } from '../server/emitter.js';

export { EVENTS_LOST, HEADER_ABORT, HEADER_ATTACH, PROXY_DEFAULTS, UPSTREAM_CONSISTENT, UPSTREAM_INCONSISTENT };

/** Response header of a resumed stream: 'exact' | 'caught-up' | 'lost' (the core's run machine, src/run/run_clients.cpp). */
export const HEADER_RESUME = 'X-AGUI-Resume';

// What a client may say it resyncs for; anything else is counted as 'other'.
const RESYNC_REASON_SET = new Set([...RESYNC_REASONS, ...REPLAY_REASONS, ...SNAPSHOT_REASONS]);

function newCounters() {
  return {
    runsStarted: 0, runsLost: 0, passed: 0, deltasSent: 0, snapshotsSent: 0, upstreamBytes: 0, clientBytes: 0,
    upstreamInconsistent: 0, upstreamMalformed: 0, slowClientsCut: 0, graceKept: 0, activityEventsSent: 0, upstreamActivityResyncs: 0,
    edits: { applied: 0, rejected: 0 },
    resumes: { exact: 0, 'caught-up': 0, lost: 0 },
    attaches: { run: 0, idle: 0 },
    aborts: { client: 0, abandoned: 0 },
    runsByConnection: {}, // connection type (forwardedProps.stateSync.connection, else 'unknown') -> runs
    resyncs: {}, // reason -> connection type -> runs whose client came back resyncing
    flakySegments: { snapshotMode: {}, switches: {} }, // connection type -> 1 while on snapshots; -> mode changes
  };
}

// The run's client, labelled: a known resync reason ('other' for a made-up one: labels are bounded) and
// connection type, which it returns (the run's segment).
function countClient(counters, input, position) {
  const connection = connectionTypeOf(input.forwardedProps?.stateSync?.connection) ?? 'unknown';
  counters.runsByConnection[connection] = (counters.runsByConnection[connection] ?? 0) + 1;
  if (position.reason === null) return connection;
  const reason = RESYNC_REASON_SET.has(position.reason) ? position.reason : 'other';
  const byConnection = (counters.resyncs[reason] ??= {});
  byConnection[connection] = (byConnection[connection] ?? 0) + 1;
  return connection;
}

// A client of `run` came back at `position` and got `events` (its catch-up): reported for the run's segment.
function noteCatchUp(ctx, run, position, events) {
  if (ctx.segments === null || run.remote) return;
  const { emitter } = run.thread;
  ctx.segments.caughtUp(run.segment, position, emitter.seq, emitter.epoch, events.some((e) => e.type === 'STATE_SNAPSHOT'));
}

// The flakySegments option's unit, loaded with the sender engine by the first run (null: the option is off).
async function flakySegments(ctx) {
  if (ctx.config.flakySegments === null) return null;
  ctx.segmentsLoading ??= FlakySegments.create(ctx.config.flakySegments, ctx.counters.flakySegments);
  ctx.segments = await ctx.segmentsLoading;
  return ctx.segments;
}

/**
 * The proxy: a Node `(req, res)` handler, plus close() (aborts every run,
 * frees everything) and stats(). Throws an AguiSyncError 'invalid-options'
 * for a wrong option (proxy/options.js lists them with their defaults).
 */
export function createStateSyncProxy(options) {
  const config = proxyOptions(options);
  const counters = newCounters();
  const ctx = {
    config, counters, registry: new Registry(config, counters), approvals: approvalBook(config.store), segments: null, segmentsLoading: null,
  };
  ctx.report = (error) => report(config, error);
  // Who may read, change or consume a thread: grants live where approvals are claimed (SECURITY.md).
  ctx.access = new Access(ctx.approvals.store, config, ctx.report);
  const { registry } = ctx;
  ctx.runHooks = {
    charge: (r, bytes) => registry.charge(r, bytes), finished: (r) => registry.finished(r), forget: (r) => registry.removeRun(r),
    caughtUp: (r, position, events) => noteCatchUp(ctx, r, position, events), counters, report: ctx.report,
  };
  // With a Redis store, every run's log is kept there too: any instance serves it (proxy/run-store.js).
  ctx.runStore = runStoreFor(config.store, {
    owner: randomUUID(), leaseMs: config.runLeaseMs, keepMs: config.graceMs + 2 * config.runLeaseMs, endedMs: config.graceMs,
    maxEvents: config.maxRunEvents, maxBytes: config.maxRunBufferBytes,
  });
  ctx.remote = ctx.runStore === null ? null : new RemoteRuns(ctx, ctx.runStore);
  const handler = (req, res) => {
    serve(ctx, req, res).catch((error) => answerFailure(ctx, res, error));
  };
  handler.close = () => {
    ctx.registry.close();
    ctx.segments?.dispose();
  };
  handler.stats = () => stats(ctx);
  // Stop taking new runs (503 + Retry-After; resumes still served) and resolve
  // once no run is live: what a SIGTERM does before close() (proxy/operate.js).
  handler.drain = () => ctx.registry.drain();
  Object.defineProperty(handler, 'draining', { get: () => ctx.registry.draining });
  return handler;
}

async function serve(ctx, req, res) {
  await loadEmitterEngine(); // the core decides who the requester is, and the run's life
  const request = await readClientRequest(req, ctx.config);
  if (request.kind === 'abort') return answerAbort(ctx, res, request);
  if (request.kind === 'attach') {
    await admit(ctx, req, request, 'attach', request.threadId);
    return serveAttach(ctx, res, request, (run, n) => resume(ctx, res, { run, n }, request.position, true));
  }
  const target = await resumeTarget(ctx, request);
  if (target) {
    await admit(ctx, req, request, 'resume', target.run.thread.id);
    return resume(ctx, res, target, request.position);
  }
  if (ctx.registry.draining) {
    return respondJson(res, 503, { error: { code: 'disposed', message: 'the proxy is shutting down: start the run on another instance' } },
      { 'retry-after': '1', connection: 'close' });
  }
  // Approvals read the thread (a verdict tells its value): only for a requester the backend accepted.
  // Edits of one it does not know yet are not applied: its state goes upstream as it sent it (SECURITY.md).
  const admission = await admit(ctx, req, request, 'start', request.input.threadId, request.input.resume);
  if (admission === 'forward') return startRun(ctx, req, res, request, null);
  const judged = await judgeRequest(ctx, request);
  if (!judged.forward) return judged.answer(res, (found) => resume(ctx, res, found, request.position), request.position);
  return startRun(ctx, req, res, request, judged);
}

// The core's access gate for `request` on `threadId`: 'serve' or 'forward'; throws the 403 refusal.
function admit(ctx, req, request, kind, threadId, resume = null) {
  request.access = { kind, threadId, credentials: credentialsOf(ctx.config, req), resume, headers: req.headers };
  return ctx.access.admit(request.access);
}

// The values of the credential headers (null: absent), in the configured order: who the requester is (SECURITY.md).
function credentialsOf(config, req) {
  return config.credentialHeaders.map((name) => header(req, name));
}

// The request's approvals, judged on its thread before anything goes upstream (proxy/approvals.js).
async function judgeRequest(ctx, { input }) {
  if (!carriesResume(input)) return { forward: true, note: () => {}, release: async () => {} };
  const thread = await ctx.registry.thread(input.threadId);
  try {
    return await judgeApprovals(ctx.approvals, thread, input);
  } finally {
    thread.pins--;
  }
}

/**
 * The run a request resumes, { run, n }, or null for a new run. Last-Event-ID
 * names a stream; a body naming another thread, or another runId once that
 * stream is over, is a new run (the id is left over from an earlier run). A
 * POST of a runId that is live on its thread resumes it from the start rather
 * than starting the agent twice.
 */
async function resumeTarget(ctx, { input, eventId }) {
  const { registry, remote } = ctx;
  if (eventId !== null) {
    let found = registry.lookup(eventId.key);
    if (found === null && remote !== null) found = { run: await remote.byKey(eventId.key) };
    const run = found?.run;
    if (run && (input === null || (input.threadId === run.thread.id && (input.runId === run.runId || !run.finished)))) {
      if (eventId.n > run.lastN) {
        throw syncError('invalid-request', 'Last-Event-ID names an event this stream has not sent', { status: 400 });
      }
      return { run, n: eventId.n };
    }
    if (input === null || (found && !run && found.gone === input.runId)) {
      throw syncError('invalid-request', 'the run of this Last-Event-ID is over and no longer held', { status: 410 });
    }
  }
  const [live] = registry.liveRuns(input.runId, input.threadId);
  if (live) return { run: live, n: 0 };
  const elsewhere = remote === null ? null : await remote.runningOn(input.threadId);
  return elsewhere !== null && elsewhere.runId === input.runId ? { run: elsewhere, n: 0 } : null;
}

// attach: an X-AGUI-Attach request (n = 0: the client joins the run; counted as an attach, not a resume).
async function resume(ctx, res, { run, n }, position, attach = false) {
  // Another instance's run is resumed once its RUN_STARTED is in the stored log (its catch-up follows that).
  if (run.remote && !run.started) await new Promise((resolve) => run.whenStarted(resolve));
  // The core decides the preamble (docs/wire.md section 8), asking for the client's catch-up when it needs one;
  // it refuses an id this stream never sent, and a run with maxRunClients connections attached (issue 38).
  try {
    await run.join(res, { afterN: n, attach, position }, (mode) => {
      if (mode === 'exact') noteCatchUp(ctx, run, position, []);
      if (!attach || n > 0) ctx.counters.resumes[mode]++;
      res.writeHead(200, { ...SSE_HEAD, [HEADER_RESUME]: mode, ...(attach ? { [HEADER_ATTACH]: 'run' } : {}) });
      res.flushHeaders();
    });
  } catch (error) {
    if (error?.code === 'limit-exceeded') error.message = `${error.message} (maxRunClients)`;
    throw error;
  }
}

/**
 * A new run. The request goes to the backend first; nothing of it is the
 * thread's until the backend accepted it (SECURITY.md). judged: the approval
 * gate's forward (the requester is authorized: its edits and the thread's
 * state go with it), or null for a requester the backend has not accepted
 * yet: its own RunAgentInput is forwarded as it came, and the thread is
 * created only on a 2xx.
 */
async function startRun(ctx, req, res, request, judged) {
  const { config } = ctx;
  const prepared = judged === null ? prepareForward(ctx, request) : await prepareOwn(ctx, request);
  const call = openUpstream(config, JSON.stringify(prepared.forwarded), req.headers);
  prepared.forwarding = ctx.registry.forwarding();
  let head;
  try {
    head = await call.head;
  } catch (error) {
    return notStarted(ctx, res, prepared, judged, () => failedRun(ctx, res, error));
  }
  if (!accepted(head.status)) {
    await ctx.access.settle(request.access, head.status);
    const refusal = await readRefusal(head.res, config.bodyTimeoutMs);
    return notStarted(ctx, res, prepared, judged, () => passRefusal(res, refusal));
  }
  try {
    await ctx.access.settle(request.access, head.status);
    if (prepared.thread === null) {
      prepared.thread = await ctx.registry.thread(request.input.threadId);
      prepared.upstream = upstreamStart(prepared.thread, prepared.forwarded);
    }
  } catch (error) {
    prepared.forwarding();
    call.abort();
    throw error;
  }
  return streamRun(ctx, res, request, prepared, { call, head, note: judged?.note ?? (() => {}), keep: judged?.keep === true });
}

// A requester the backend has not accepted yet: its own RunAgentInput, with the prompt context of its own state only.
function prepareForward(ctx, request) {
  const forwarded = forwardedInput(request.input, undefined);
  return { thread: null, forwarded: withPromptContext(ctx.config.promptContext, forwarded, forwarded.state ?? {}, null) };
}

// An authorized requester's run: its edits applied to the thread, its state (and prompt context) forwarded. The thread stays pinned.
async function prepareOwn(ctx, request) {
  const thread = await ctx.registry.thread(request.input.threadId);
  try {
    const edited = applyEdits(ctx, thread, request); // a Promise for a store-bound thread
    let forwarded = forwardedInput(request.input, typeof edited?.then === 'function' ? await edited : edited);
    const upstream = upstreamStart(thread, forwarded); // read now: the cursor starts where the thread stands
    forwarded = withPromptContext(ctx.config.promptContext, forwarded, upstream.base, upstream.own ? thread.emitter : null); // throws for one it cannot add
    return { thread, forwarded, upstream };
  } catch (error) {
    thread.pins--;
    throw error;
  }
}

// The backend did not start the run: the thread is let go, the request's approval claims released, then answer().
async function notStarted(ctx, res, prepared, judged, answer) {
  prepared.forwarding();
  if (prepared.thread !== null) prepared.thread.pins--;
  try {
    await judged?.release();
  } finally {
    answer();
  }
}

// No response from the backend: one RUN_ERROR, as a run that could not start.
function failedRun(ctx, res, error) {
  ctx.report(error);
  res.writeHead(200, SSE_HEAD);
  res.end(frameEvent(null, JSON.stringify(runError('upstream-failed', withoutPrefix(error)))));
}

// The backend's refusal reaches the client as the backend said it: status, body, and the headers that explain it.
function passRefusal(res, { status, headers, body }) {
  res.writeHead(status, { 'cache-control': 'no-store', ...headers, 'content-length': String(body.length) });
  res.end(body);
}

// The backend accepted the run: it is registered, the client gets its stream, and the upstream's body is relayed.
async function streamRun(ctx, res, request, prepared, { call, head, note, keep }) {
  const { config, registry, counters } = ctx;
  const { input } = request;
  const { thread, upstream } = prepared;
  let run;
  try {
    const stored = ctx.runStore === null ? null : new StoredRunLog(ctx.runStore, { leaseMs: config.runLeaseMs, counters, report: ctx.report });
    run = new Run({
      key: newStreamKey(), runId: input.runId, thread, fingerprint: request.fingerprint, position: request.position, plain: request.plain, config,
      hooks: ctx.runHooks, stored, keep,
    });
    registry.addRun(run);
    note(run);
  } catch (error) {
    call.abort();
    throw error;
  } finally {
    prepared.forwarding();
    thread.pins--;
  }
  counters.runsStarted++;
  run.segment = countClient(counters, input, request.position);
  res.writeHead(200, SSE_HEAD);
  res.flushHeaders();
  run.attachStarter(res);
  const { base, start } = upstream;
  let engine;
  let cursor;
  let segments;
  try {
    // The store's answers a run starts from, read at once: the upstream's own last state of the thread
    // (one of its run's starts, as any instance kept it) and the thread's activities (a plain
    // upstream's deltas apply to them).
    let seed;
    [segments, seed] = await Promise.all([flakySegments(ctx), thread.activitySeed(), thread.syncUpstreamView()]);
    cursor = await RunCursor.create(thread, start, config.emitter.maxDepth);
    // The receiver beside the thread's emitter: each verified state is written with no JSON text of it (relay-engine.js).
    engine = await RelayEngine.create({ initialState: base, maxEventBytes: config.maxEventBytes, maxStateBytes: config.maxStateBytes, activities: true });
    engine.seed(seed);
  } catch (error) {
    call.abort();
    cursor?.dispose();
    ctx.report(error);
    run.finish({ code: 'engine-failed', message: withoutPrefix(error) });
    return;
  }
  if (run.finished) { // aborted meanwhile
    call.abort();
    cursor.dispose();
    return engine.dispose();
  }
  const relay = new Relay({ run, engine, cursor, counters, onError: ctx.report, segments });
  const stop = readUpstream(head.res, {
    data: (chunk) => relay.feed(chunk),
    end: (error) => endRun(ctx, run, relay, error),
  });
  run.bindUpstream(() => {
    stop();
    call.abort();
    relay.dispose();
  });
}

/**
 * The request's edits (forwardedProps.stateSync.edits), applied to its thread
 * before the run goes upstream (docs/wire.md section 9). Returns the state to
 * forward as RunAgentInput.state: the thread's, with the accepted edits;
 * undefined to forward the client's (no edits, or a thread the proxy has no
 * state of). The events carrying the verdicts reach the requesting client in
 * its catch-up after RUN_STARTED (its position is from before them), in seq
 * order with everything else; the thread's other live runs get them now if
 * their streams stand at the seq the events continue from (the others catch
 * up as after any gap).
 */
function applyEdits(ctx, thread, { edits, position }) {
  if (edits === null) return undefined;
  const before = thread.emitter.seq;
  return after(thread.applyClientEdits(edits, position.epoch, ctx.config.edits), (outcome) => {
    if (outcome === null) return undefined;
    for (const result of outcome.results) ctx.counters.edits[result.status]++;
    for (const run of thread.runs) {
      if (run.finished || run.remote || run.seq !== before) continue;
      for (const event of outcome.events) {
        run.send(event, true);
        ctx.counters[event.type === 'STATE_DELTA' ? 'deltasSent' : 'snapshotsSent']++;
      }
    }
    return thread.state;
  });
}

// The upstream's response is over (error: null after a complete one).
function endRun(ctx, run, relay, error) {
  if (run.finished) return;
  let ended = null; // the relay's pending outcomes (a store-bound thread's writes are async) go out first
  let failure = error;
  if (failure === null) {
    try {
      ended = relay.end();
    } catch (thrown) {
      failure = thrown;
    }
  } else ended = relay.settled();
  // The upstream's own last state is kept before the run ends: its next run may start on another instance.
  const kept = () => relay.keepUpstreamView(ctx.report);
  if (typeof ended?.then === 'function') {
    ended.then(kept).then(() => finishRun(ctx, run, relay, failure), (thrown) => finishRun(ctx, run, relay, failure ?? thrown));
    return;
  }
  after(kept(), () => finishRun(ctx, run, relay, failure));
}

function finishRun(ctx, run, relay, failure) {
  relay.dispose();
  if (run.finished) return;
  // The core ends the stream: with RUN_ERROR when the upstream failed, or ended before its RUN_FINISHED / RUN_ERROR.
  if (failure) ctx.report(failure);
  run.finish(failure ? { code: failure.code === 'engine-failed' ? 'engine-failed' : 'upstream-failed', message: withoutPrefix(failure) } : null);
}

// X-AGUI-Abort: <runId>: aborts the live runs of that runId started with the same credentials.
// With run logs in Redis, an instance that serves none of the run's clients
// asks its holder through the store (the balancer picks where an abort lands).
async function answerAbort(ctx, res, { runId, fingerprint }) {
  const runs = ctx.registry.liveRuns(runId).filter((run) => run.fingerprint === fingerprint);
  let aborted = 0;
  for (const run of runs) if (run.abort('client')) aborted++;
  if (runs.length === 0 && ctx.runStore !== null) {
    try {
      aborted = await ctx.runStore.requestAbortOf(runId, fingerprint);
    } catch (error) {
      ctx.report(error);
      respondJson(res, 503, { error: { code: 'store-unavailable', message: 'the run store cannot be reached' } });
      return;
    }
  }
  ctx.counters.aborts.client += aborted;
  const found = runs.length > 0 || aborted > 0;
  respondJson(res, found ? 202 : 404, { aborted: found });
}

function answerFailure(ctx, res, error) {
  const status = error instanceof AguiSyncError && Number.isInteger(error.status) ? error.status : 500;
  if (status === 500) ctx.report(error);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const code = error instanceof AguiSyncError ? error.code : 'engine-failed';
  const headers = status === 405 ? { allow: 'GET, POST' } : {};
  // After a refused body the rest of it may still be on the way: do not reuse the connection.
  if (status === 408 || status === 413) headers.connection = 'close';
  respondJson(res, status, { error: { code, message: withoutPrefix(error) } }, headers);
}

function respondJson(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

function withoutPrefix(error) {
  const message = describeThrown(error);
  return message.startsWith(PREFIX) ? message.slice(PREFIX.length) : message;
}

// Hands `error` to options.onError as an AguiSyncError; a throwing onError is reported, never rethrown.
function report(config, error) {
  if (!config.onError) return;
  const wrapped = error instanceof AguiSyncError ? error : syncError('engine-failed', describeThrown(error), { cause: asCause(error) });
  try {
    config.onError(wrapped);
  } catch (thrown) {
    reportListenerError(thrown, 'the proxy onError option');
  }
}

function stats(ctx) {
  const { registry, counters } = ctx;
  return {
    threads: registry.threadCount,
    runs: registry.runCount,
    liveRuns: registry.liveRunCount,
    bufferedBytes: registry.bufferedBytes,
    ...structuredClone(counters),
  };
}
