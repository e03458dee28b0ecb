// Attach (issue 26, item 2): StateSyncHttpAgent.connectAgent() -> a real
// faulty TCP link (tests/support/fault-link.mjs, seeded) -> the sequencing
// proxy (X-AGUI-Attach, docs/wire.md section 8) -> a plain AG-UI backend
// (tests/support/upstreams.mjs). The upstream's run ends only when the test
// releases it (faults.hold), so "mid-run" is a fact, not a race:
//  - a second client attached mid-run sees the same run (one RUN_STARTED, its
//    runId, every message's text and the tool call once) and converges to the
//    same state as the client that started it; the upstream ran once;
//  - a client reloaded mid-run (the page's agent gone, a new one restored from
//    its checkpoint) keeps streaming the same answer, text once, its state
//    caught up by replay, and the upstream run was neither aborted nor repeated;
//  - connect() on an idle thread ends synced (a fresh client by snapshot, one
//    at the thread's seq with nothing);
//  - @ag-ui/client's verifyEvents accepts the attached wire stream as it is,
//    also when the run's oldest events were dropped from the proxy's log;
//  - an attach that comes before the run's RUN_STARTED waits for it;
//  - only the run's starter's credentials abort it.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { lastValueFrom, from, toArray } from 'rxjs';
import { verifyEvents } from '@ag-ui/client';
import { startFaultLink } from '../support/fault-link.mjs';
import { buildScript, INITIAL_STATE, messageTexts, SHAPES } from '../support/upstreams.mjs';
import { jsDir, plain } from './support.mjs';
import { eventWatcher, FAULTS, proxyModule, readStream, runInput, stack, stackOn, until } from './proxy-support.mjs';

const { StateSyncHttpAgent } = await import(join(jsDir, 'src', 'ag-ui.js'));
const { HEADER_ATTACH, HEADER_RESUME } = proxyModule;

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';

const SEEDS = [1, 2, 3];
const T = { timeout: 30000 };
const BACKOFF = { initialMs: 5, maxMs: 50 };
// A brief that never changes keeps the state big enough for the deltas a reloaded page missed to beat a snapshot.
const BRIEF = 'Plan the team offsite: venue, flights, dinner, budget. '.repeat(200);
const INITIAL = { ...INITIAL_STATE, brief: BRIEF };

const closers = [];
after(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A promise and the function that settles it: the upstream's RUN_FINISHED waits for it. */
function gate() {
  let release;
  const promise = new Promise((resolve) => { release = resolve; });
  return { promise, release };
}

/** The platform fetch, recording each request's attach header and what the proxy answered. */
function recordingFetch(log) {
  return async (url, init = {}) => {
    const headers = new Headers(init.headers);
    const entry = { method: init.method ?? 'GET', attach: headers.get('x-agui-attach'), lastEventId: headers.get('last-event-id') };
    log.push(entry);
    const response = await fetch(url, init);
    entry.status = response.status;
    entry.answer = response.headers.get(HEADER_ATTACH);
    entry.resume = response.headers.get(HEADER_RESUME);
    entry.catchUp = response.headers.get('x-agui-state-sync');
    return response;
  };
}

const count = (types, type) => types.filter((t) => t === type).length;
const toolArgs = (events) => events.filter((e) => e.type === 'TOOL_CALL_ARGS').map((e) => e.delta).join('');
const sawText = (seen) => seen.types.includes('TEXT_MESSAGE_CONTENT');

function agentOn(url, threadId, log, extra = {}) {
  const { stateSync, ...config } = extra;
  return new StateSyncHttpAgent({ url, threadId, fetch: recordingFetch(log), ...config, stateSync: { backoff: BACKOFF, ...stateSync } });
}

/** What a client of the upstream run `request` must have seen: the run once, its text and tool call once. */
function checkSameRun(seen, request, what) {
  assert.deepEqual(seen.errors, [], `${what}: no error (verifyEvents passed)`);
  assert.equal(count(seen.types, 'RUN_STARTED'), 1, `${what}: one RUN_STARTED`);
  assert.equal(count(seen.types, 'RUN_FINISHED'), 1, `${what}: one RUN_FINISHED`);
  assert.equal(seen.events.find((e) => e.type === 'RUN_STARTED').runId, request.input.runId, `${what}: the run's own RUN_STARTED`);
  assert.deepEqual(messageTexts(seen.events), messageTexts(request.events), `${what}: every message's text, once`);
  assert.equal(count(seen.types, 'TEXT_MESSAGE_START'), count(request.events.map((e) => e.type), 'TEXT_MESSAGE_START'));
  assert.equal(toolArgs(seen.events), toolArgs(request.events), `${what}: the tool call's arguments, once`);
}

/** The agent's transcript holds each upstream message once, with its full text. */
function checkMessages(agent, request, what) {
  const messages = plain(agent.messages);
  assert.equal(new Set(messages.map((m) => m.id)).size, messages.length, `${what}: no message twice`);
  for (const [id, text] of Object.entries(messageTexts(request.events))) {
    const found = messages.filter((m) => m.id === id);
    assert.equal(found.length, 1, `${what}: message ${id} once`);
    assert.equal(found[0].content, text, `${what}: message ${id} has the upstream's full text`);
  }
}

describe('connectAgent() -> faulty link -> proxy: a second client attached mid-run', () => {
  for (const shape of SHAPES) {
    for (const seed of SEEDS) {
      test(`${shape} upstream, seed ${seed}: the attached client sees the same run and converges to the same state`, T, async () => {
        const hold = gate();
        const s = await stack({ upstream: { shape, script: buildScript({ seed, steps: 16 }), stepMs: 2, initialState: INITIAL, faults: { hold: hold.promise } } });
        const link = await startFaultLink({ target: { host: '127.0.0.1', port: s.port }, seed, ...FAULTS });
        closers.push(() => link.close(), () => s.close());
        const threadId = `t-second-${shape}-${seed}`;
        const log = [];
        const starter = agentOn(link.url('/agent'), threadId, log);
        const second = agentOn(link.url('/agent'), threadId, log);
        await Promise.all([starter.ready, second.ready]);

        const a = eventWatcher();
        const running = starter.runAgent({ runId: `run-${seed}` }, a.subscriber);
        await until(() => sawText(a.seen), 'the starter to see chat text');
        const b = eventWatcher();
        const attached = second.connectAgent({}, b.subscriber);
        await until(() => b.seen.types.includes('RUN_STARTED'), 'the attached client to see the run start');
        assert.equal(s.upstream.requests[0].completed, false, 'the upstream run is still going');
        hold.release();
        await Promise.all([running, attached]);

        const [request] = s.upstream.requests;
        assert.equal(s.upstream.requests.length, 1, 'the upstream agent ran once');
        assert.equal(request.aborted, false);
        checkSameRun(a.seen, request, 'starter');
        checkSameRun(b.seen, request, 'attached');
        checkMessages(second, request, 'attached');
        const final = s.upstream.state(threadId);
        assert.deepEqual(plain(second.state), final, 'the attached client converged on the upstream\'s state');
        assert.deepEqual(plain(starter.state), final);
        assert.equal(second.stateSync.status, 'synced');
        assert.equal(second.state, second.stateSync.state);
        const attaches = log.filter((e) => e.attach === threadId);
        assert.equal(attaches[0].lastEventId, null, 'the first attach names no stream');
        assert.ok(attaches.filter((e) => e.status === 200).every((e) => e.answer === 'run'), 'every attach found the run');
        assert.ok(s.proxy.stats().attaches.run >= 1);
        assert.equal(s.proxy.stats().attaches.idle, 0);
        assert.deepEqual(s.proxy.stats().aborts, { client: 0, abandoned: 0 });
        assert.deepEqual(s.errors, []);
        starter.dispose();
        second.dispose();
      });
    }
  }
});

describe('connectAgent() -> faulty link -> proxy: a page reloaded mid-run', () => {
  for (const seed of SEEDS) {
    test(`seed ${seed}: the reloaded page keeps streaming the same answer, text once, its state replayed`, T, async () => {
      const hold = gate();
      const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed, steps: 16 }), stepMs: 2, initialState: INITIAL, faults: { hold: hold.promise } } });
      const link = await startFaultLink({ target: { host: '127.0.0.1', port: s.port }, seed, ...FAULTS });
      closers.push(() => link.close(), () => s.close());
      const threadId = `t-reload-${seed}`;
      const storage = new Map(); // the page's checkpoint store (IndexedDB in a browser)
      const persist = { key: `thread:${threadId}`, storage: { get: async (k) => storage.get(k), set: async (k, v) => { storage.set(k, v); }, delete: async (k) => { storage.delete(k); } } };
      const log = [];
      const page = agentOn(link.url('/agent'), threadId, log, { stateSync: { persist } });
      await page.ready;
      const before = eventWatcher();
      const running = page.runAgent({ runId: `run-${seed}` }, before.subscriber);
      await until(() => sawText(before.seen) && page.stateSync.lastSeq !== null, 'the page to see chat text and a state');
      await page.stateSync.flush();
      page.dispose(); // the tab goes away: its connection closes, nothing aborts the run
      await running.catch(() => {});

      const reloaded = agentOn(link.url('/agent'), threadId, log, { stateSync: { persist } });
      await reloaded.ready;
      assert.equal(reloaded.stateSync.persistence.restore, 'restored');
      const restoredSeq = reloaded.stateSync.lastSeq;
      const after = eventWatcher();
      const attached = reloaded.connectAgent({}, after.subscriber);
      await until(() => after.seen.types.includes('RUN_STARTED'), 'the reloaded page to attach');
      hold.release();
      await attached;

      const [request] = s.upstream.requests;
      assert.equal(s.upstream.requests.length, 1, 'the reload did not start the agent again');
      assert.equal(request.aborted, false, 'the reload did not abort the run');
      assert.equal(request.completed, true);
      checkSameRun(after.seen, request, 'reloaded');
      checkMessages(reloaded, request, 'reloaded');
      assert.deepEqual(plain(reloaded.state), s.upstream.state(threadId));
      assert.equal(reloaded.stateSync.status, 'synced');
      // The restored page says where it is, and the first attach answers it with the deltas it missed.
      const first = log.find((e) => e.attach === threadId && e.status === 200);
      assert.equal(first.resume, 'caught-up');

      const restoredStates = after.seen.events.filter((e) => e.type === 'STATE_SNAPSHOT' || e.type === 'STATE_DELTA');
      assert.ok(restoredStates.every((e) => e.type === 'STATE_DELTA'), 'the reloaded page was caught up by replay, never a snapshot');
      assert.ok(restoredStates.length === 0 || restoredStates[0].metadata['agui-state-sync'].baseSeq === restoredSeq,
        'the replay continues from the restored seq');
      assert.deepEqual(s.proxy.stats().aborts, { client: 0, abandoned: 0 });
      assert.deepEqual(s.errors, []);
      reloaded.dispose();
    });
  }
});

describe('connectAgent() -> proxy: a thread with no running run', () => {
  test('connect() brings the state up to date and ends synced: a fresh client by snapshot, a current one with nothing', T, async () => {
    const s = await stack({ upstream: { shape: 'snapshots', script: buildScript({ seed: 9, steps: 10 }), stepMs: 1, initialState: INITIAL } });
    closers.push(() => s.close());
    const threadId = 't-idle';
    const log = [];
    const starter = agentOn(s.url('/agent'), threadId, log);
    await starter.ready;
    await starter.runAgent({ runId: 'run-idle' });
    const final = s.upstream.state(threadId);
    assert.deepEqual(plain(starter.state), final);

    const fresh = agentOn(s.url('/agent'), threadId, log);
    await fresh.ready;
    const seen = eventWatcher();
    await fresh.connectAgent({}, seen.subscriber);
    assert.deepEqual(seen.seen.errors, []);
    assert.deepEqual(seen.seen.types, ['RUN_STARTED', 'STATE_SNAPSHOT', 'RUN_FINISHED'], 'a complete run of its own: the catch-up');
    assert.deepEqual(plain(fresh.state), final, 'caught up');
    assert.equal(fresh.stateSync.status, 'synced');
    assert.equal(fresh.stateSync.lastSeq, starter.stateSync.lastSeq);
    assert.equal(fresh.isRunning, false);
    const answered = log.at(-1);
    assert.deepEqual([answered.method, answered.attach, answered.answer, answered.catchUp], ['GET', threadId, 'idle', 'snapshot']);

    const again = eventWatcher();
    await starter.connectAgent({}, again.subscriber);
    assert.deepEqual(again.seen.types, ['RUN_STARTED', 'RUN_FINISHED'], 'nothing to send a current client');
    assert.equal(log.at(-1).catchUp, 'current');
    assert.equal(starter.stateSync.status, 'synced');
    assert.equal(s.upstream.requests.length, 1, 'connect() never runs the agent');
    assert.deepEqual(s.proxy.stats().attaches, { run: 0, idle: 2 });
    starter.dispose();
    fresh.dispose();
  });

  test('a thread the proxy never saw: connect() ends without a state to give', T, async () => {
    const s = await stack();
    closers.push(() => s.close());
    const log = [];
    const agent = agentOn(s.url('/agent'), 't-unknown', log);
    await agent.ready;
    const seen = eventWatcher();
    await agent.connectAgent({}, seen.subscriber);
    // No requester is authorized for a thread nobody ran (SECURITY.md): 403, which connect() takes as nothing to attach to.
    assert.deepEqual(seen.seen.types, []);
    assert.equal(log.at(-1).status, 403);
    assert.equal(agent.stateSync.lastSeq, null);
    assert.equal(s.upstream.requests.length, 0);
    agent.dispose();
  });
});

describe('connectAgent() against a server that cannot attach', () => {
  test('a 405, a 404 or a page (no X-AGUI-Attach in the answer): connectAgent() resolves with nothing, as HttpAgent\'s', T, async () => {
    const answers = [
      (res) => res.writeHead(405, { allow: 'POST' }).end(),
      (res) => res.writeHead(404).end('not found'),
      (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'),
    ];
    for (const answer of answers) {
      let requests = 0;
      const server = createServer((req, res) => {
        requests++;
        answer(res);
      });
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const agent = new StateSyncHttpAgent({ url: `http://127.0.0.1:${server.address().port}/agent`, threadId: 't-plain', initialState: { a: 1 }, stateSync: { backoff: BACKOFF } });
      await agent.ready;
      const seen = eventWatcher();
      const result = await agent.connectAgent({}, seen.subscriber);
      assert.deepEqual(plain(result.newMessages), []);
      assert.deepEqual(seen.seen.types, [], 'no event');
      assert.deepEqual(seen.seen.errors, []);
      assert.equal(requests, 1, 'asked once, not retried');
      assert.equal(agent.isRunning, false);
      assert.deepEqual(plain(agent.state), { a: 1 });
      agent.dispose();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('a controller set on the agent before connectAgent() (as CopilotKit does) stops it', T, async () => {
    const hold = gate();
    const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed: 3, steps: 4 }), stepMs: 1, initialState: INITIAL, faults: { hold: hold.promise } } });
    closers.push(() => s.close());
    const log = [];
    const starter = agentOn(s.url('/agent'), 't-controller', log);
    const viewer = agentOn(s.url('/agent'), 't-controller', log);
    await Promise.all([starter.ready, viewer.ready]);
    const running = starter.runAgent({ runId: 'run-controller' });
    await until(() => s.proxy.stats().runsStarted === 1, 'the run');
    const controller = new AbortController();
    viewer.abortController = controller;
    const seen = eventWatcher();
    const attached = viewer.connectAgent({}, seen.subscriber);
    await until(() => seen.seen.types.includes('RUN_STARTED'), 'the attach');
    controller.abort();
    await attached;
    assert.equal(viewer.isRunning, false, 'stopped by the caller\'s controller');
    assert.equal(s.upstream.requests[0].aborted, false, 'stopping to listen is not an abort');
    hold.release();
    await running;
    starter.dispose();
    viewer.dispose();
  });
});

/** verifyEvents (@ag-ui/client) over a list of events: resolves with them, rejects with its error. */
function verified(events) {
  return lastValueFrom(from(events).pipe(verifyEvents(false), toArray()));
}

describe('the attached wire stream, as any AG-UI client reads it', () => {
  test('verifyEvents accepts it: RUN_STARTED once and first, the catch-up, the run so far, live, RUN_FINISHED', T, async () => {
    const hold = gate();
    const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed: 4, steps: 16 }), stepMs: 1, initialState: INITIAL, faults: { hold: hold.promise } } });
    closers.push(() => s.close());
    const threadId = 't-verify';
    const starter = readStream(s.url(), { input: runInput(threadId, 'run-verify') });
    await until(() => s.upstream.requests[0]?.events.some((e) => e.type === 'TEXT_MESSAGE_CONTENT'), 'chat text upstream');
    const attached = readStream(s.url(), { method: 'GET', headers: { [HEADER_ATTACH]: threadId }, onText: (text) => text.includes('TEXT_MESSAGE_CONTENT') && hold.release() });
    const [mine, theirs] = await Promise.all([starter, attached]);
    assert.equal(theirs.status, 200);
    assert.equal(theirs.headers.get(HEADER_ATTACH), 'run');
    assert.equal(theirs.headers.get(HEADER_RESUME), 'caught-up');
    const events = theirs.events.map((e) => e.data);
    assert.deepEqual(await verified(events), events, 'verifyEvents passes every event');
    assert.equal(events[0].type, 'RUN_STARTED');
    assert.equal(events[1].type, 'STATE_SNAPSHOT', 'a client without state gets a snapshot right after RUN_STARTED');
    assert.equal(count(events.map((e) => e.type), 'RUN_STARTED'), 1);
    assert.deepEqual(messageTexts(events), messageTexts(mine.events.map((e) => e.data)), 'the same text as the starter');
    assert.deepEqual(events.filter((e) => !e.type.startsWith('STATE_')).map((e) => e.type),
      mine.events.map((e) => e.data).filter((e) => !e.type.startsWith('STATE_')).map((e) => e.type));
  });

  test('after the run\'s oldest events were dropped: RUN_STARTED still first, no chat text without its start', T, async () => {
    const hold = gate();
    const upstream = { shape: 'docs', script: buildScript({ seed: 5, steps: 40, textEvery: 1 }), stepMs: 0, initialState: INITIAL, faults: { hold: hold.promise } };
    const s = await stack({ upstream, proxy: { maxRunBufferBytes: 4000 } });
    closers.push(() => s.close());
    const threadId = 't-lost';
    let sent = '';
    const starter = readStream(s.url(), { input: runInput(threadId, 'run-lost'), onText: (text) => { sent = text; } });
    // The script's last message (m39) has reached the starter: every event before RUN_FINISHED is in the log.
    await until(() => sent.includes('"type":"TEXT_MESSAGE_END","messageId":"m39"'), 'the whole script through the proxy');
    const attached = readStream(s.url(), { method: 'GET', headers: { [HEADER_ATTACH]: threadId }, onText: () => hold.release() });
    const [, theirs] = await Promise.all([starter, attached]);
    assert.equal(theirs.headers.get(HEADER_RESUME), 'lost', 'the log no longer holds the run\'s start');
    const events = theirs.events.map((e) => e.data);
    assert.deepEqual(await verified(events), events);
    assert.equal(events[0].type, 'RUN_STARTED');
    assert.ok(events.some((e) => e.type === 'CUSTOM' && e.name === 'agui-state-sync.events-lost'));
    assert.ok(events.some((e) => e.type === 'TEXT_MESSAGE_CONTENT'), 'the messages still held are there');
    assert.equal(events.at(-1).type, 'RUN_FINISHED');
  });
});

describe('attach before the run has started', () => {
  test('an attach that comes before the upstream\'s RUN_STARTED waits for it and gets its own catch-up', T, async () => {
    // An upstream that answers only when the test lets it: the proxy's run exists, its RUN_STARTED does not yet.
    const opened = gate();
    let requests = 0;
    const upstream = createServer(async (req, res) => {
      for await (const chunk of req) void chunk;
      requests++;
      // The run is the thread's once the upstream accepted it (its response head, SECURITY.md).
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      await opened.promise;
      const send = (event) => res.write(`data: ${JSON.stringify(event)}\n\n`);
      send({ type: 'RUN_STARTED', threadId: 't-early', runId: 'run-early' });
      send({ type: 'STATE_SNAPSHOT', snapshot: { step: 1 } });
      send({ type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' });
      send({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'hello' });
      send({ type: 'TEXT_MESSAGE_END', messageId: 'm' });
      send({ type: 'RUN_FINISHED', threadId: 't-early', runId: 'run-early' });
      res.end();
    });
    await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${upstream.address().port}/agent`;
    const s = await stackOn({ url, close: () => new Promise((resolve) => { upstream.closeAllConnections(); upstream.close(resolve); }) });
    closers.push(() => s.close());
    const starter = readStream(s.url(), { input: runInput('t-early', 'run-early') });
    await until(() => requests === 1 && s.proxy.stats().liveRuns === 1, 'the run to be forwarded');
    const attached = readStream(s.url(), { method: 'GET', headers: { [HEADER_ATTACH]: 't-early' } });
    await until(() => s.proxy.stats().attaches.run === 1, 'the attach to find the run');
    opened.release();
    const [mine, theirs] = await Promise.all([starter, attached]);
    const events = theirs.events.map((e) => e.data);
    assert.deepEqual(await verified(events), events);
    assert.deepEqual(events.map((e) => e.type), mine.events.map((e) => e.data.type), 'the same run');
    assert.deepEqual(events[1].snapshot, { step: 1 });
  });
});

describe('what an attached client may do', () => {
  test('abort: only with the credentials that started the run (a reloaded page, the same user); others get 404 and the run goes on', T, async () => {
    const hold = gate();
    // The other user may read the thread (the deployer's check says so), not act on the owner's run.
    const authorize = ({ headers }) => headers.authorization === 'Bearer someone-else';
    const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed: 6, steps: 6 }), stepMs: 1, initialState: INITIAL, faults: { hold: hold.promise } },
      proxy: { authorize } });
    closers.push(() => s.close());
    const threadId = 't-abort';
    const log = [];
    const starter = agentOn(s.url('/agent'), threadId, log, { headers: { authorization: 'Bearer owner' } });
    const other = agentOn(s.url('/agent'), threadId, log, { headers: { authorization: 'Bearer someone-else' }, stateSync: { abortUrl: s.url('/agent') } });
    const same = agentOn(s.url('/agent'), threadId, log, { headers: { authorization: 'Bearer owner' }, stateSync: { abortUrl: s.url('/agent') } });
    await Promise.all([starter.ready, other.ready, same.ready]);
    const a = eventWatcher();
    const running = starter.runAgent({ runId: 'run-owned' }, a.subscriber);
    await until(() => a.seen.types.includes('RUN_STARTED'), 'the run');

    const o = eventWatcher();
    const otherAttached = other.connectAgent({}, o.subscriber);
    await until(() => o.seen.types.includes('RUN_STARTED'), 'the other user to attach');
    other.abortRun(); // stops its own listening; the proxy refuses to abort another user's run
    await otherAttached;
    await until(() => log.some((e) => e.method === 'POST' && e.status === 404), 'the refused abort');
    assert.equal(s.proxy.stats().aborts.client, 0);
    assert.equal(s.upstream.requests[0].aborted, false);

    const m = eventWatcher();
    const sameAttached = same.connectAgent({}, m.subscriber);
    await until(() => m.seen.types.includes('RUN_STARTED'), 'the same user to attach');
    same.abortRun();
    await sameAttached;
    await until(() => s.proxy.stats().aborts.client === 1, 'the abort by the run\'s owner');
    await running.catch(() => {});
    assert.equal(a.seen.events.find((e) => e.type === 'RUN_ERROR')?.code, 'run-aborted', 'the starter hears of the abort');
    await until(() => s.upstream.requests[0].aborted, 'the upstream request to close');
    hold.release();
    for (const agent of [starter, other, same]) agent.dispose();
  });
});
