// What a real user runs: the @ag-ui/client-based StateSyncHttpAgent
// (agui-state-sync/ag-ui) -> a real faulty TCP link (tests/support/fault-link.mjs:
// cuts at random offsets, stalls, delays, re-chunking, seeded) -> the
// sequencing proxy (createStateSyncProxy) -> a plain AG-UI backend
// (tests/support/upstreams.mjs: the AG-UI docs' snapshot + deltas, snapshots
// only, the seed article's top-level seq/base_seq), streaming chat text and a
// tool call between its state changes. No mocks: the agent's fetch is the
// platform's, only teed so the test can read what crossed the link.
// For every shape and seed, two runAgent() calls on one thread:
//  - runAgent() resolves, subscribers see one RUN_STARTED and one RUN_FINISHED,
//    every message's text and the tool call's arguments exactly once;
//  - while 'synced', agent.state is a state the upstream held; at the end it is
//    the upstream's final state, and the very object stateSync.state is;
//  - the upstream agent ran once per runAgent(): every reconnect resumed the
//    proxy's run (X-AGUI-Resume) instead of starting the agent again;
//  - the second run's catch-up is 'current' (or a replay), never a snapshot.
// And abortRun() with stateSync.abortUrl at the proxy aborts the upstream run,
// while the cuts before it did not.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { startFaultLink } from '../support/fault-link.mjs';
import { buildScript, INITIAL_STATE, messageTexts, SHAPES } from '../support/upstreams.mjs';
import { jsDir, plain } from './support.mjs';
import { FAULTS, isOneOf, keepBody, parseSse, proxyModule, stack, until } from './proxy-support.mjs';

const { StateSyncHttpAgent } = await import(join(jsDir, 'src', 'ag-ui.js'));
const { HEADER_RESUME } = proxyModule;

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';

const SEEDS = [1, 2, 3, 4, 5, 6];
const T = { timeout: 20000 };
const BACKOFF = { initialMs: 5, maxMs: 50 };
// A brief that never changes keeps the state big enough for a delta to beat a
// snapshot: any STATE_SNAPSHOT of a later run is then a catch-up.
const BRIEF = 'Plan the team offsite: venue, flights, dinner, budget. '.repeat(8);
const INITIAL = { ...INITIAL_STATE, brief: BRIEF };

const totals = { tests: 0, cuts: 0, stalls: 0, runRequests: 0, answeredReconnects: 0, resumed: 0, modes: {}, catchUps: {} };
const closers = [];
after(async () => {
  for (const close of closers.splice(0)) await close();
});

/**
 * The platform fetch, with every request and what came back recorded:
 * { runId, lastEventId, abort, stateSync (forwardedProps.stateSync), status,
 * resume (X-AGUI-Resume), text (the body bytes that arrived, as text) }.
 */
function recordingFetch(log, { dropAfterHead = () => false } = {}) {
  return async (url, init = {}) => {
    const headers = new Headers(init.headers);
    const body = typeof init.body === 'string' ? JSON.parse(init.body) : null;
    const entry = {
      runId: body?.runId ?? null,
      lastEventId: headers.get('last-event-id'),
      abort: headers.get('x-agui-abort'),
      stateSync: body?.forwardedProps?.stateSync,
      status: null,
      resume: null,
      text: '',
    };
    log.push(entry);
    const response = await fetch(url, init);
    entry.status = response.status;
    entry.resume = response.headers.get(HEADER_RESUME);
    if (dropAfterHead(entry, log)) {
      // The connection breaks right after the response head, before any event.
      await response.body?.cancel();
      entry.dropped = true;
      throw new TypeError('terminated (the test dropped this connection after its response head)');
    }
    return keepBody(response, entry);
  };
}

/** The complete SSE events of a recorded response. */
function eventsOf(entry) {
  const text = entry.text.slice(0, entry.text.lastIndexOf('\n\n') + 2);
  return parseSse(text).filter((e) => e.data !== undefined);
}

/** A subscriber recording what one runAgent() call shows it, and checking agent.state whenever it changes. */
function watcher(agent, history) {
  const seen = { types: [], events: [], errors: [], stateChanges: 0, syncedChecks: 0, violations: [] };
  return {
    seen,
    subscriber: {
      onEvent: ({ event }) => {
        seen.types.push(event.type);
        seen.events.push(plain(event));
      },
      onStateChanged: () => {
        seen.stateChanges++;
        if (agent.stateSync.status !== 'synced') return;
        seen.syncedChecks++;
        const state = plain(agent.state);
        if (!isOneOf(state, history())) seen.violations.push(state);
      },
      onRunFailed: ({ error }) => {
        seen.errors.push(error);
      },
    },
  };
}

const count = (types, type) => types.filter((t) => t === type).length;
const toolArgs = (events) => events.filter((e) => e.type === 'TOOL_CALL_ARGS').map((e) => e.delta).join('');

/** One runAgent() call's checks against the upstream request it caused. */
function checkRun(agent, seen, request, s, threadId) {
  assert.deepEqual(seen.errors, []);
  assert.equal(count(seen.types, 'RUN_STARTED'), 1, 'one RUN_STARTED');
  assert.equal(count(seen.types, 'RUN_FINISHED'), 1, 'one RUN_FINISHED');
  assert.equal(count(seen.types, 'RUN_ERROR'), 0);
  assert.equal(request.completed, true, 'the upstream run completed');
  assert.equal(request.aborted, false, 'a cut is not an abort');
  // Chat text and the tool call, exactly once.
  const upstreamTexts = messageTexts(request.events);
  assert.deepEqual(messageTexts(seen.events), upstreamTexts, 'every message\'s chunks, once, in order');
  assert.equal(count(seen.types, 'TEXT_MESSAGE_CONTENT'), count(request.events.map((e) => e.type), 'TEXT_MESSAGE_CONTENT'));
  assert.equal(count(seen.types, 'TEXT_MESSAGE_START'), count(request.events.map((e) => e.type), 'TEXT_MESSAGE_START'));
  assert.equal(toolArgs(seen.events), toolArgs(request.events));
  const messages = plain(agent.messages);
  assert.equal(new Set(messages.map((m) => m.id)).size, messages.length, 'no message twice');
  for (const [id, text] of Object.entries(upstreamTexts)) {
    const found = messages.filter((m) => m.id === id);
    assert.equal(found.length, 1, `message ${id} once`);
    assert.equal(found[0].role, 'assistant');
    assert.equal(found[0].content, text, `message ${id}: the upstream's full text`);
  }
  const upstreamTool = request.events.find((e) => e.type === 'TOOL_CALL_START');
  const toolCalls = messages.flatMap((m) => m.toolCalls ?? []);
  assert.equal(toolCalls.length, 1, 'one tool call');
  assert.equal(toolCalls[0].id, upstreamTool.toolCallId);
  assert.equal(toolCalls[0].function.name, 'book_venue');
  assert.equal(toolCalls[0].function.arguments, '{"city":"lisbon","seats":12}');
  assert.deepEqual(JSON.parse(toolCalls[0].function.arguments), { city: 'lisbon', seats: 12 });
  // State: on upstream states while synced; converged at the end; one object.
  assert.deepEqual(seen.violations, [], 'agent.state was a state the upstream never held while synced');
  assert.ok(seen.syncedChecks > 0, 'onStateChanged checked some synced states');
  assert.equal(agent.stateSync.status, 'synced');
  assert.deepEqual(plain(agent.state), s.upstream.state(threadId), 'converged on the upstream\'s final state');
  assert.equal(agent.state, agent.stateSync.state, 'agent.state is stateSync.state');
}

/** The run requests of `runId` that went over the link, and how the proxy answered each. */
function connectionsOf(log, runId) {
  return log.filter((e) => e.abort === null && e.runId === runId);
}

describe('StateSyncHttpAgent -> faulty link -> proxy -> plain AG-UI backend', () => {
  for (const shape of SHAPES) {
    for (const seed of SEEDS) {
      test(`${shape} upstream, seed ${seed}: two runAgent() calls through cuts: one upstream run each, text and tool call once, synced states are upstream states, second catch-up not a snapshot`, T, async () => {
        const s = await stack({ upstream: { shape, script: buildScript({ seed, steps: 16 }), stepMs: 2, initialState: INITIAL } });
        const link = await startFaultLink({ target: { host: '127.0.0.1', port: s.port }, seed, ...FAULTS });
        closers.push(() => link.close(), () => s.close());
        const threadId = `t-${shape}-${seed}`;
        const log = [];
        const agent = new StateSyncHttpAgent({
          url: link.url('/agent'),
          threadId,
          fetch: recordingFetch(log),
          stateSync: { abortUrl: link.url('/agent'), backoff: BACKOFF },
        });
        await agent.ready;
        const history = () => s.upstream.history(threadId);

        // First run: the thread is new to the proxy.
        const first = watcher(agent, history);
        const firstResult = await agent.runAgent({ runId: 'run-1' }, first.subscriber);
        assert.equal(s.upstream.requests.length, 1, 'the upstream agent ran once for the first runAgent()');
        checkRun(agent, first.seen, s.upstream.requests[0], s, threadId);
        assert.deepEqual(plain(firstResult.newMessages).map((m) => m.id).sort(),
          plain(agent.messages).map((m) => m.id).sort(), 'runAgent() result: the run\'s new messages');
        const lastSeq = agent.stateSync.lastSeq;
        const epoch = agent.stateSync.epoch;
        assert.ok(Number.isSafeInteger(lastSeq) && typeof epoch === 'string');

        // Second run on the same thread: the client says where it is; the proxy is current.
        agent.setMessages([]); // the script reuses its message ids; a fresh transcript keeps the count exact
        const second = watcher(agent, history);
        await agent.runAgent({ runId: 'run-2' }, second.subscriber);
        assert.equal(s.upstream.requests.length, 2, 'the upstream agent ran once for the second runAgent()');
        checkRun(agent, second.seen, s.upstream.requests[1], s, threadId);
        assert.equal(s.upstream.requests[1].input.forwardedProps.stateSync, undefined, 'forwardedProps.stateSync is the proxy\'s');

        const runTwo = connectionsOf(log, 'run-2');
        assert.deepEqual(runTwo[0].stateSync, { lastSeq, epoch, reason: null, held: [] }, 'the second run started from the first one\'s position');
        // The run's own stream (the connection that started it, and exact resumes: the
        // run's logged bytes) carries its catch-up: state events at or below the
        // client's seq, none ('current') or deltas (a replay). A 'caught-up' resume
        // is answered for its own position (a snapshot is then allowed, section 3).
        const runStream = runTwo.filter((c) => c.status === 200 && (c.resume === null || c.resume === 'exact'));
        const stateEvents = runStream.flatMap(eventsOf).map((e) => e.data).filter((e) => e.type === 'STATE_SNAPSHOT' || e.type === 'STATE_DELTA');
        assert.ok(stateEvents.length > 0);
        assert.deepEqual(stateEvents.filter((e) => e.type === 'STATE_SNAPSHOT'), [], 'no snapshot in the second run\'s stream');
        const catchUp = stateEvents.filter((e) => e.metadata['agui-state-sync'].seq <= lastSeq);
        const mode = catchUp.length === 0 ? 'current' : 'replay';
        assert.ok(catchUp.every((e) => e.type === 'STATE_DELTA' && e.metadata['agui-state-sync'].epoch === epoch));
        assert.equal(mode, 'current', 'a client at the thread\'s seq needs nothing');
        const firstDelta = eventsOf(runTwo[0]).map((e) => e.data).find((e) => e.type === 'STATE_DELTA');
        if (firstDelta) assert.equal(firstDelta.metadata['agui-state-sync'].baseSeq, lastSeq, 'the second run continues from the client\'s seq');
        totals.catchUps[mode] = (totals.catchUps[mode] ?? 0) + 1;

        // Every reconnect was a resume of the proxy's run, never a new upstream run.
        for (const runId of ['run-1', 'run-2']) {
          const connections = connectionsOf(log, runId);
          const fresh = connections.filter((c) => c.status === 200 && c.resume === null);
          assert.ok(fresh.length <= 1, `${runId}: at most one connection started the run`);
          for (const c of connections.slice(1)) {
            if (c.status !== null) assert.ok(c.status === 200 && c.resume !== null, `${runId}: a reconnect was answered as a resume`);
          }
          // A connection cut inside the response head gets no answer to count (status null).
          const answered = connections.filter((c) => c.status !== null);
          totals.runRequests += connections.length;
          totals.answeredReconnects += answered.length - fresh.length;
          totals.resumed += answered.filter((c) => c.resume !== null).length;
          for (const c of connections) if (c.resume) totals.modes[c.resume] = (totals.modes[c.resume] ?? 0) + 1;
        }
        assert.equal(s.upstream.requests.filter((r) => r.aborted).length, 0);
        assert.deepEqual(s.proxy.stats().aborts, { client: 0, abandoned: 0 });
        assert.deepEqual(s.errors, []);
        totals.tests++;
        totals.cuts += link.stats.cuts;
        totals.stalls += link.stats.stalls;
        agent.dispose();
        await link.close();
        await s.close();
      });
    }
  }

  test('the link did cut and stall, and every reconnect was resumed by the proxy (the properties are not vacuous)', (t) => {
    t.diagnostic(JSON.stringify(totals));
    const expected = SHAPES.length * SEEDS.length;
    assert.equal(totals.tests, expected, JSON.stringify(totals));
    assert.ok(totals.cuts >= 2 * expected, JSON.stringify(totals));
    assert.ok(totals.stalls > 0, JSON.stringify(totals));
    assert.ok(totals.runRequests > 2 * expected, JSON.stringify(totals));
    assert.equal(totals.resumed, totals.answeredReconnects, JSON.stringify(totals));
    assert.ok(totals.resumed >= expected, JSON.stringify(totals));
    assert.deepEqual(totals.catchUps, { current: expected });
  });
});

describe('StateSyncHttpAgent -> faulty link -> proxy: an abort is not a cut', () => {
  test('cuts are resumed and leave the upstream run going; abortRun() with abortUrl at the proxy aborts it', T, async () => {
    // The upstream run never finishes by itself (its end waits on a hold never released): it is still going at
    // the cuts and at the abort however slowly the client gets there.
    const hold = new Promise(() => {});
    const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed: 11, steps: 60 }), stepMs: 25, initialState: INITIAL, faults: { hold } } });
    const link = await startFaultLink({
      target: { host: '127.0.0.1', port: s.port }, seed: 11, cutProbability: 1, cutAfterBytes: [300, 1200], chunkBytes: [1, 400],
    });
    closers.push(() => link.close(), () => s.close());
    const threadId = 't-abort';
    const log = [];
    const agent = new StateSyncHttpAgent({
      url: link.url('/agent'),
      threadId,
      headers: { authorization: 'Bearer user-1' },
      fetch: recordingFetch(log),
      stateSync: { abortUrl: link.url('/agent'), backoff: BACKOFF },
    });
    await agent.ready;
    const { seen, subscriber } = watcher(agent, () => s.upstream.history(threadId));
    const running = agent.runAgent({ runId: 'run-abort' }, subscriber);
    await until(() => s.upstream.requests.length === 1, 'the upstream run');
    const [request] = s.upstream.requests;
    let closed = false;
    request.closed.then(() => {
      closed = true;
    });

    // Several cuts, each resumed: the upstream run goes on.
    await until(() => link.stats.cuts >= 3 && s.proxy.stats().resumes.exact + s.proxy.stats().resumes['caught-up'] >= 2, 'cuts and resumes');
    assert.equal(closed, false, 'a cut did not close the upstream request');
    assert.equal(request.aborted, false);
    assert.equal(s.upstream.requests.length, 1, 'no second upstream run');
    assert.deepEqual(s.proxy.stats().aborts, { client: 0, abandoned: 0 });
    assert.equal(count(seen.types, 'RUN_STARTED'), 1);
    assert.ok(!request.events.some((e) => e.type === 'RUN_FINISHED'), 'still streaming');

    // abortRun(): the agent stops, and abortUrl tells the proxy to abort the upstream run.
    agent.abortRun();
    const result = await running; // as with HttpAgent: an abort is not a failure
    assert.equal(result.result, undefined);
    assert.equal(seen.errors[0]?.name, 'AbortError');
    await until(() => closed, 'the upstream request to close');
    assert.equal(request.aborted, true, 'closed before its run completed');
    assert.equal(request.completed, false);
    assert.ok(!request.events.some((e) => e.type === 'RUN_FINISHED'), 'aborted mid-run');
    assert.equal(s.proxy.stats().aborts.client, 1, 'aborted by the X-AGUI-Abort request');
    assert.equal(s.proxy.stats().aborts.abandoned, 0);
    const aborts = log.filter((e) => e.abort !== null);
    assert.deepEqual(aborts.map((e) => e.abort), ['run-abort'], 'one X-AGUI-Abort: <runId> request');
    // Nothing reconnects after the abort, without waiting to see none: every request goes through the agent's
    // fetch (logged as it is made), and runAgent() resolved once its reconnect loop had ended, so the abort
    // request is the last one there will be.
    assert.equal(log.at(-1).abort, 'run-abort', 'no reconnect after abortRun()');
    assert.equal(s.upstream.requests.length, 1);
    assert.equal(agent.state, agent.stateSync.state);
    assert.deepEqual(seen.violations, []);
    assert.deepEqual(s.errors, []);
    agent.dispose();
    await link.close();
    await s.close();
  });
});

describe('StateSyncHttpAgent -> proxy: a connection lost before its first event', () => {
  test('the POST retry attaches to the live run (exact without a position, caught-up with one) instead of running the agent again', T, async () => {
    const s = await stack({ upstream: { shape: 'snapshots', script: buildScript({ seed: 7, steps: 12 }), stepMs: 3, initialState: INITIAL } });
    const link = await startFaultLink({ target: { host: '127.0.0.1', port: s.port }, seed: 7 });
    closers.push(() => link.close(), () => s.close());
    const threadId = 't-head';
    const log = [];
    // The first connection of each run is dropped after its response head.
    const dropAfterHead = (entry, all) => entry.abort === null && all.filter((e) => e.runId === entry.runId).length === 1;
    const agent = new StateSyncHttpAgent({
      url: link.url('/agent'), threadId, fetch: recordingFetch(log, { dropAfterHead }), stateSync: { backoff: BACKOFF },
    });
    await agent.ready;
    const history = () => s.upstream.history(threadId);
    const modes = [];
    for (const [index, runId] of ['run-1', 'run-2'].entries()) {
      agent.setMessages([]);
      const idBefore = agent.stateSync.lastEventId; // the last run's last event id (null before any)
      const { seen, subscriber } = watcher(agent, history);
      await agent.runAgent({ runId }, subscriber);
      assert.equal(s.upstream.requests.length, index + 1, `${runId}: the upstream agent ran once`);
      checkRun(agent, seen, s.upstream.requests[index], s, threadId);
      const [dropped, retry, ...rest] = connectionsOf(log, runId);
      assert.equal(dropped.dropped, true);
      assert.equal(dropped.resume, null, 'the dropped connection started the run');
      // No event of this run arrived: the retry can only name the previous run's
      // last event, which the proxy takes as left over (another runId, that run is over).
      assert.equal(retry.lastEventId, idBefore, 'the retry had no event id of this run to give');
      assert.equal(index === 0 ? idBefore === null : typeof idBefore === 'string', true);
      assert.deepEqual(rest, [], 'no further reconnect');
      modes.push(retry.resume);
    }
    assert.deepEqual(modes, ['exact', 'caught-up'], 'no position: the whole log; a position: the catch-up rules');
    assert.deepEqual(s.proxy.stats().aborts, { client: 0, abandoned: 0 });
    assert.deepEqual(s.errors, []);
    agent.dispose();
    await link.close();
    await s.close();
  });
});
