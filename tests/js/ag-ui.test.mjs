// agui-state-sync/ag-ui against the real @ag-ui/client 1.0: StateSyncHttpAgent
// side by side with HttpAgent on upstream servers written as backends write
// them (EventEncoder), sequenceState() on a server's agent, and a real faulty
// TCP link (tests/support/fault-link.mjs). No mocks of @ag-ui/client.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { HttpAgent } from '@ag-ui/client';
import { startFaultLink } from '../support/fault-link.mjs';
import {
  BRIEF,
  CounterAgent,
  DOCS_FINAL,
  docsEvents,
  recorder,
  seedArticleEvents,
  snapshotEvents,
  sseHead,
  startSequencedServer,
  startServer,
  writeAll,
} from './ag-ui-support.mjs';
import { jsDir, pkg, plain, repoRoot } from './support.mjs';
import { until } from '../support/until.mjs';

const { StateSyncHttpAgent, sequenceState } = await import(join(jsDir, 'src', 'ag-ui.js'));
const { AguiSyncError, createStateSync } = pkg;

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true'; // @ag-ui/client's notes on the seed article's top-level seq fields
const FAST = { initialMs: 2, maxMs: 20, jitter: 0 };
const T = { timeout: 30000 };
const closers = [];
after(async () => {
  for (const close of closers.splice(0)) await close();
});

async function server(handler) {
  const s = await startServer(handler);
  closers.push(s.close);
  return s;
}

/** A StateSyncHttpAgent, loaded. */
async function syncAgent(config) {
  const agent = new StateSyncHttpAgent({ ...config, stateSync: { backoff: FAST, ...config.stateSync } });
  await agent.ready;
  return agent;
}

/** Runs `agent` once with a recorder; returns what the run and the subscriber saw. */
async function runWith(agent, parameters = {}) {
  const { seen, subscriber } = recorder();
  const result = await agent.runAgent({ runId: 'run-1', ...parameters }, subscriber);
  return { result, seen };
}

describe('StateSyncHttpAgent next to HttpAgent on the same upstream servers', () => {
  const shapes = [
    ['(a) the AG-UI docs: unsequenced snapshot + deltas', (input) => docsEvents(input), 'unverified'],
    ['(b) snapshots only', (input) => snapshotEvents(input), 'unverified'],
    ['(c) the seed article: unstamped snapshot, deltas with top-level seq/base_seq', (input) => seedArticleEvents(input), 'unverified'],
  ];
  for (const [name, events, status] of shapes) {
    test(`${name}: same messages, tool calls and result; agent.state is stateSync.state`, T, async () => {
      const s = await server(({ input, res, encoder }) => writeAll(res, encoder, events(input)));
      const plainAgent = new HttpAgent({ url: s.url, threadId: 'th' });
      const ours = await syncAgent({ url: s.url, threadId: 'th' });
      const theirs = await runWith(plainAgent);
      const mine = await runWith(ours);
      assert.deepEqual(plain(mine.result), plain(theirs.result));
      assert.deepEqual(plain(ours.messages), plain(plainAgent.messages));
      assert.deepEqual(plain(ours.state), plain(plainAgent.state));
      assert.deepEqual(mine.seen.types, theirs.seen.types, 'subscribers see the same events');
      assert.equal(ours.state, ours.stateSync.state, 'the very same object');
      assert.equal(ours.stateSync.status, status);
      assert.equal(mine.seen.runStarted, 1);
      ours.dispose();
    });
  }

  test('(c) the seed article: the first sequenced delta is adopted (metrics.anchors)', T, async () => {
    const s = await server(({ input, res, encoder }) => writeAll(res, encoder, seedArticleEvents(input)));
    const ours = await syncAgent({ url: s.url });
    await runWith(ours);
    assert.equal(ours.stateSync.metrics().anchors, 1);
    assert.equal(ours.stateSync.lastSeq, 3);
    assert.deepEqual(ours.state.proposal, { payee: 'ACME Ltd', amount: 120 });
    ours.dispose();
  });

  test('(d) sequenceState() on the server: fully sequenced, status synced, same result as HttpAgent', T, async () => {
    const middleware = sequenceState();
    const s = await startSequencedServer(middleware, new CounterAgent({ target: 4, stepMs: 1 }));
    closers.push(s.close, () => middleware.dispose());
    const plainAgent = new HttpAgent({ url: s.url, threadId: 'plain' });
    const ours = await syncAgent({ url: s.url, threadId: 'ours' });
    const theirs = await runWith(plainAgent);
    const mine = await runWith(ours);
    assert.deepEqual(mine.result.result, theirs.result.result);
    const contents = (messages) => plain(messages).map((m) => m.content);
    assert.deepEqual(contents(mine.result.newMessages), contents(theirs.result.newMessages));
    assert.deepEqual(contents(ours.messages), contents(plainAgent.messages));
    const withCatchUp = [theirs.seen.types[0], 'STATE_SNAPSHOT', ...theirs.seen.types.slice(1)];
    assert.deepEqual(mine.seen.types, withCatchUp, 'the same events, plus the catch-up snapshot after RUN_STARTED');
    assert.deepEqual(plain(ours.state), plain(plainAgent.state));
    assert.equal(ours.state, ours.stateSync.state);
    assert.equal(ours.stateSync.status, 'synced');
    assert.equal(ours.stateSync.lastSeq, middleware.emitterFor('ours').seq);
    assert.deepEqual(plain(ours.state), middleware.emitterFor('ours').state);
    const input = s.requests[1].input;
    assert.deepEqual(input.forwardedProps.stateSync, { lastSeq: null, epoch: null, reason: null, held: [] });
    ours.dispose();
  });
});

describe('StateSyncHttpAgent: a corrupt delta', () => {
  test('leaves HttpAgent silently stale; StateSyncHttpAgent reports a resync and heals', T, async () => {
    // The server's bug strikes once per client: its first answer carries a
    // delta computed against the wrong base; the reconnect (a plain server
    // runs the agent again) comes out right.
    const s = await server(({ input, req, res, encoder }) => writeAll(res, encoder, docsEvents(input, { corrupt: !req.headers['x-agui-resync-reason'] })));
    const warnings = [];
    const warn = console.warn;
    console.warn = (...args) => warnings.push(args.join(' '));
    let theirs;
    try {
      const plainAgent = new HttpAgent({ url: s.url });
      theirs = await runWith(plainAgent);
      theirs.state = plain(plainAgent.state);
      theirs.messages = plain(plainAgent.messages);
    } finally {
      console.warn = warn;
    }
    assert.notDeepEqual(theirs.state, DOCS_FINAL, 'HttpAgent kept going on a state the agent never had');
    assert.ok(warnings.some((w) => /Failed to apply state patch/.test(w)), 'all it did was a console.warn');

    const outcomes = [];
    const ours = await syncAgent({ url: s.url, stateSync: { onOutcome: (o) => outcomes.push(o) } });
    const mine = await runWith(ours);
    assert.deepEqual(outcomes.filter((o) => o.kind === 'resync').map((o) => o.reason), ['patch-failed']);
    assert.equal(ours.stateSync.metrics().resyncsByReason['patch-failed'], 1);
    assert.deepEqual(plain(ours.state), DOCS_FINAL, 'healed');
    assert.equal(ours.state, ours.stateSync.state);
    assert.deepEqual(plain(mine.result), plain(theirs.result));
    assert.deepEqual(plain(ours.messages), theirs.messages);
    assert.equal(mine.seen.runStarted, 1, 'the reconnect did not start the run twice');
    const retry = s.requests[2];
    assert.equal(retry.headers['x-agui-resync-reason'], 'patch-failed');
    assert.equal(retry.input.forwardedProps.stateSync.reason, 'patch-failed');
    assert.equal(retry.input.runId, 'run-1', 'the same run');
    assert.deepEqual(retry.input.state, { todos: [{ text: 'buy milk', done: false }, { text: 'walk dog', done: false }], title: '' },
      'RunAgentInput.state is the engine\'s state: the last one it could vouch for');
    ours.dispose();
  });

  test('a state event the engine refused never changes agent.state', T, async () => {
    let release;
    const gate = new Promise((resolve) => { release = resolve; });
    const s = await server(async ({ input, res, encoder, index }) => {
      if (index > 0) return writeAll(res, encoder, [{ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId }, { type: 'STATE_SNAPSHOT', snapshot: { n: 2 }, metadata: { seq: 9, epoch: 'E' } }, { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId }]);
      sseHead(res, encoder);
      res.write(encoder.encode({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId }));
      res.write(encoder.encode({ type: 'STATE_SNAPSHOT', snapshot: { n: 1 }, metadata: { seq: 1, epoch: 'E' } }));
      res.write(encoder.encode({ type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/n', value: 5 }], metadata: { seq: 3, baseSeq: 2, epoch: 'E' } }));
      await gate;
      res.end();
    });
    const ours = await syncAgent({ url: s.url });
    const states = [];
    ours.subscribe({ onStateChanged: ({ state }) => states.push(plain(state)) });
    const running = runWith(ours);
    await until(() => ours.stateSync.metrics().held > 0, 'the delta to be held');
    assert.deepEqual(plain(ours.state), { n: 1 }, 'the held delta did not move agent.state');
    release();
    await running;
    assert.deepEqual(states, [{ n: 1 }, { n: 2 }]);
    assert.equal(ours.stateSync.status, 'synced');
    ours.dispose();
  });
});

describe('StateSyncHttpAgent: reconnects inside one runAgent() call', () => {
  test('a cut mid-message: the server starts over, RUN_STARTED is not repeated, the open message is closed', T, async () => {
    const s = await server(({ input, res, encoder, index }) => {
      const events = [
        { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId },
        { type: 'STATE_SNAPSHOT', snapshot: { phase: index } },
        { type: 'TEXT_MESSAGE_START', messageId: `m${index}`, role: 'assistant' },
        { type: 'TEXT_MESSAGE_CONTENT', messageId: `m${index}`, delta: 'Hello' },
      ];
      if (index > 0) {
        return writeAll(res, encoder, [...events, { type: 'TEXT_MESSAGE_END', messageId: `m${index}` },
          { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId, result: 'done' }]);
      }
      sseHead(res, encoder);
      // Cut once the client has read what was sent (a cut any sooner could lose bytes still in flight).
      const read = () => ours.messages.some((m) => m.id === 'm0' && m.content === 'Hello');
      res.write(events.map((e) => encoder.encode(e)).join(''), () => until(read, 'the client to read m0').then(() => res.socket.destroy()));
    });
    const ours = await syncAgent({ url: s.url });
    const { result, seen } = await runWith(ours);
    assert.equal(result.result, 'done');
    assert.equal(seen.runStarted, 1);
    assert.deepEqual(seen.types.filter((t) => t === 'TEXT_MESSAGE_END').length, 2, 'the cut message was closed');
    assert.deepEqual(plain(ours.messages).map((m) => [m.id, m.content]), [['m0', 'Hello'], ['m1', 'Hello']]);
    assert.deepEqual(plain(ours.state), { phase: 1 });
    assert.equal(s.requests.length, 2);
    assert.equal(s.requests[1].input.runId, 'run-1');
    ours.dispose();
  });

  test('events with a stable SSE id are delivered once, even when the server replays from the start', T, async () => {
    // State events are the engine's to de-duplicate, by seq: the replayed
    // snapshot is stale and the replayed delta a duplicate.
    const script = (input) => [
      { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId },
      { type: 'STATE_SNAPSHOT', snapshot: { lines: [] }, metadata: { seq: 1, epoch: 'E' } },
      { type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'one ' },
      { type: 'STATE_DELTA', delta: [{ op: 'add', path: '/lines/-', value: 1 }], metadata: { seq: 2, baseSeq: 1, epoch: 'E' } },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'two' },
      { type: 'TEXT_MESSAGE_END', messageId: 'm' },
      { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId },
    ];
    const s = await server(({ input, res, encoder, index }) => {
      sseHead(res, encoder);
      // Every event carries `id: <position in the run>`, CRLF-framed; the first answer is cut inside the sixth.
      const text = script(input).map((e, i) => `id: e${i}\r\n${encoder.encode(e).replace(/\n/g, '\r\n')}`).join('');
      if (index > 0) return res.end(text);
      const cut = text.indexOf('id: e5') + 12;
      // Cut once the client has taken e4 (the delta to seq 2), so that it is the id it resumes after.
      res.write(text.slice(0, cut), () => until(() => ours.stateSync.lastSeq === 2, 'the client to take e4').then(() => res.socket.destroy()));
    });
    const ours = await syncAgent({ url: s.url });
    const { seen } = await runWith(ours);
    assert.equal(s.requests[1].headers['last-event-id'], 'e4');
    assert.deepEqual(seen.types, ['RUN_STARTED', 'STATE_SNAPSHOT', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT',
      'STATE_DELTA', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED']);
    assert.deepEqual(plain(ours.messages), [{ id: 'm', role: 'assistant', content: 'one two' }]);
    assert.deepEqual(plain(ours.state), { lines: [1] });
    assert.equal(ours.stateSync.metrics().duplicates, 1);
    assert.equal(ours.stateSync.metrics().staleSnapshots, 1);
    assert.equal(ours.stateSync.status, 'synced');
    ours.dispose();
  });

  test('abortRun(): the fetch is aborted, nothing reconnects, abortUrl hears X-AGUI-Abort: <runId>', T, async () => {
    const aborts = [];
    const s = await server(({ input, req, res, encoder }) => {
      if (req.headers['x-agui-abort']) {
        aborts.push(req.headers['x-agui-abort']);
        return res.writeHead(204).end();
      }
      sseHead(res, encoder);
      res.write(encoder.encode({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId })); // then silence
    });
    // Every request the agent makes goes through its fetch: counted here as it is made, not as it arrives.
    const fetched = [];
    const fetch = (url, init) => {
      fetched.push(new Headers(init.headers).get('x-agui-abort') ?? 'run');
      return globalThis.fetch(url, init);
    };
    const ours = await syncAgent({ url: s.url, fetch, headers: { authorization: 'Bearer t' }, stateSync: { abortUrl: s.url } });
    const { seen, subscriber } = recorder();
    const running = ours.runAgent({ runId: 'r-abort' }, subscriber);
    await until(() => seen.runStarted > 0, 'RUN_STARTED');
    ours.abortRun();
    assert.deepEqual(fetched, ['run', 'r-abort'], 'abortRun() sends its one X-AGUI-Abort request then and there');
    const result = await running; // as with HttpAgent: an abort is not a failure
    assert.equal(result.result, undefined);
    assert.equal(seen.errors[0]?.name, 'AbortError');
    // No reconnect, without waiting to see none: runAgent() resolves once its reconnect loop has ended, and
    // nothing else makes requests for the run, so what was fetched by now is all there will be.
    assert.deepEqual(fetched, ['run', 'r-abort'], 'no reconnect after an abort');
    await until(() => aborts.length > 0, 'the abort request'); // sent, not awaited
    assert.deepEqual(aborts, ['r-abort']);
    assert.equal(s.requests.filter((r) => !r.headers['x-agui-abort']).length, 1, 'no reconnect after an abort');
    assert.equal(s.requests.find((r) => r.headers['x-agui-abort']).headers.authorization, 'Bearer t');
    ours.dispose();
  });

  test('RUN_ERROR ends the run: no reconnect to heal the state of a failed run', T, async () => {
    const s = await server(({ input, res, encoder }) => writeAll(res, encoder, [
      { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId },
      { type: 'STATE_SNAPSHOT', snapshot: { n: 1 }, metadata: { seq: 1, epoch: 'E' } },
      { type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/n', value: 3 }], metadata: { seq: 3, baseSeq: 2, epoch: 'E' } },
      { type: 'RUN_ERROR', message: 'model unavailable', code: 'E_MODEL' },
    ]));
    const ours = await syncAgent({ url: s.url });
    const { seen } = await runWith(ours);
    assert.deepEqual(seen.types, ['RUN_STARTED', 'STATE_SNAPSHOT', 'RUN_ERROR']);
    assert.equal(s.requests.length, 1);
    assert.equal(ours.stateSync.status, 'resyncing', 'the gap is reported, not hidden');
    assert.deepEqual(plain(ours.state), { n: 1 });
    ours.dispose();
  });

  test('subscribers cannot replace agent.state: their state mutations are ignored (one warning)', T, async () => {
    const s = await server(({ input, res, encoder }) => writeAll(res, encoder, docsEvents(input)));
    const ours = await syncAgent({ url: s.url });
    const warnings = [];
    const warn = console.warn;
    console.warn = (...args) => warnings.push(args.join(' '));
    try {
      await ours.runAgent({ runId: 'r' }, {
        onTextMessageEndEvent: () => ({ state: { hijacked: true } }),
        onStateDeltaEvent: () => ({ state: { hijacked: true }, stopPropagation: true }),
        onRunFinishedEvent: async () => ({ state: { hijacked: true } }),
      });
    } finally {
      console.warn = warn;
    }
    assert.deepEqual(plain(ours.state), DOCS_FINAL);
    assert.equal(ours.state, ours.stateSync.state);
    assert.equal(warnings.filter((w) => /agui-state-sync/.test(w)).length, 2, 'once per kind');
    ours.dispose();
  });

  test('a 4xx or a malformed RunAgentInput ends the run with an AguiSyncError', T, async () => {
    const s = await server(({ res }) => res.writeHead(403).end('no'));
    const ours = await syncAgent({ url: s.url });
    const errors = console.error;
    console.error = () => {};
    try {
      await assert.rejects(ours.runAgent({ runId: 'r' }), (error) => error instanceof AguiSyncError && error.code === 'http-error' && error.status === 403);
      await assert.rejects(ours.runAgent({ runId: 'r2', tools: [{ name: 5 }] }), (error) => error instanceof AguiSyncError && error.code === 'invalid-argument');
      assert.equal(s.requests.length, 1, 'nothing was sent for the malformed input');
    } finally {
      console.error = errors;
    }
    ours.dispose();
  });
});

describe('StateSyncHttpAgent behind a real faulty link to a sequenced server', () => {
  const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];
  const cuts = [];
  for (const seed of SEEDS) {
    test(`seed ${seed}: synced means equal to the upstream at that seq; converges; one RUN_STARTED`, T, async () => {
      const middleware = sequenceState();
      const upstream = await startSequencedServer(middleware, new CounterAgent({ target: 15, stepMs: 2 }));
      const link = await startFaultLink({
        target: { host: '127.0.0.1', port: upstream.port }, seed, cutProbability: 0.85, cutAfterBytes: [200, 3000],
        stallProbability: 0.02, stallMs: 30, delayMs: [0, 1], chunkBytes: [1, 700],
      });
      closers.push(upstream.close, () => link.close(), () => middleware.dispose());
      const ours = await syncAgent({ url: link.url('/agent'), threadId: `fault-${seed}` });
      const violations = [];
      ours.stateSync.subscribe(() => {
        const sync = ours.stateSync;
        if (sync.status !== 'synced') return;
        const expected = upstream.history.get(sync.lastSeq);
        if (expected !== JSON.stringify(sync.state)) violations.push({ seq: sync.lastSeq, state: JSON.stringify(sync.state), expected });
      });
      const { result, seen } = await runWith(ours);
      assert.deepEqual(violations, []);
      const emitter = middleware.emitterFor(`fault-${seed}`);
      assert.equal(ours.stateSync.status, 'synced');
      assert.deepEqual(plain(ours.state), emitter.state, 'converged');
      assert.equal(ours.state, ours.stateSync.state);
      assert.equal(ours.state.items.length, 15);
      assert.deepEqual(result.result, { items: 15 });
      assert.equal(seen.runStarted, 1);
      assert.equal(seen.types.filter((t) => t === 'RUN_FINISHED').length, 1);
      assert.equal(upstream.requests.length, link.stats.cuts + 1, 'one reconnect per cut, same runAgent() call');
      cuts.push(link.stats.cuts);
      ours.dispose();
    });
  }
  test('the link did cut (most runs reconnected several times)', () => {
    assert.equal(cuts.length, SEEDS.length);
    assert.ok(cuts.filter((n) => n >= 2).length >= SEEDS.length / 2, `cuts per seed: ${cuts}`);
  });
});

describe('StateSyncHttpAgent in development', () => {
  test('the states handed out are deep-frozen, as @ag-ui/client freezes its own; the engine goes on applying deltas', T, async () => {
    const previous = process.env.NODE_ENV;
    process.env.NODE_ENV = 'development';
    try {
      const middleware = sequenceState();
      const upstream = await startSequencedServer(middleware, new CounterAgent({ target: 6, stepMs: 0 }));
      closers.push(upstream.close, () => middleware.dispose());
      const ours = await syncAgent({ url: upstream.url, threadId: 'dev' });
      const writes = [];
      await ours.runAgent({ runId: 'r' }, {
        onStateChanged: ({ state }) => {
          try {
            state.items.push('x');
          } catch (error) {
            writes.push(error instanceof TypeError);
          }
        },
      });
      assert.ok(writes.length > 0 && writes.every(Boolean), 'every in-place write threw');
      assert.ok(Object.isFrozen(ours.state) && Object.isFrozen(ours.state.items[0]));
      assert.equal(ours.state, ours.stateSync.state);
      assert.deepEqual(plain(ours.state), middleware.emitterFor('dev').state);
      assert.equal(ours.stateSync.metrics().mirrorReloads, 0);
      ours.dispose();
    } finally {
      if (previous === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = previous;
    }
  });
});

describe('sequenceState()', () => {
  async function collect(middleware, agent, input) {
    const events = [];
    await new Promise((resolve, reject) => middleware.run(input, agent).subscribe({ next: (e) => events.push(e), error: reject, complete: resolve }));
    return events;
  }
  const input = (extra = {}) => ({ threadId: 'T', runId: 'R', messages: [], tools: [], context: [], state: { brief: BRIEF, items: [], total: 0 }, forwardedProps: {}, ...extra });

  test('stamps state events from one emitter per thread and answers stateSync with a snapshot or a replay', T, async () => {
    const middleware = sequenceState({ emitter: { snapshotRatio: 100 } });
    const agent = new CounterAgent({ target: 3, stepMs: 0 });
    const first = await collect(middleware, agent, input({ forwardedProps: { stateSync: { lastSeq: null, epoch: null } } }));
    assert.equal(first[0].type, 'RUN_STARTED');
    assert.equal(first[1].type, 'STATE_SNAPSHOT', 'the catch-up follows RUN_STARTED');
    const states = first.filter((e) => e.type.startsWith('STATE_'));
    assert.deepEqual(states.map((e) => e.metadata['agui-state-sync'].seq), [0, 1, 2, 3], 'the agent\'s unchanged snapshot is not sent again');
    assert.ok(states.slice(1).every((e) => e.type === 'STATE_DELTA' && e.metadata['agui-state-sync'].baseSeq === e.metadata['agui-state-sync'].seq - 1));
    const epoch = middleware.emitterFor('T').epoch;
    assert.ok(states.every((e) => e.metadata['agui-state-sync'].epoch === epoch));
    assert.deepEqual(first.filter((e) => !e.type.startsWith('STATE_')).map((e) => e.type).slice(0, 2), ['RUN_STARTED', 'TEXT_MESSAGE_START'], 'other events pass through');

    // A client that missed seq 3 starts the next run from its state at seq 2.
    const atThree = middleware.emitterFor('T').state;
    const atTwo = { ...atThree, items: atThree.items.slice(0, 2), total: 2 };
    const second = await collect(middleware, new CounterAgent({ target: 3, stepMs: 0 }),
      input({ runId: 'R2', state: atTwo, forwardedProps: { stateSync: { lastSeq: 2, epoch } } }));
    const catchUp = second.slice(1).filter((e) => e.type.startsWith('STATE_'));
    assert.equal(catchUp[0].type, 'STATE_DELTA');
    assert.deepEqual(catchUp.map((e) => e.metadata['agui-state-sync'].seq), [3, 4, 5], 'seq 3 replayed, back to its state (4), then the new item (5)');
    const unknown = await collect(middleware, new CounterAgent({ target: 0 }), input({ runId: 'R3', state: middleware.emitterFor('T').state, forwardedProps: { stateSync: { lastSeq: 5, epoch: 'other' } } }));
    assert.equal(unknown[1].type, 'STATE_SNAPSHOT', 'another epoch gets a snapshot');
    assert.equal(unknown[1].metadata['agui-state-sync'].seq, 5);
    const plainClient = await collect(middleware, new CounterAgent({ target: 0 }), input({ runId: 'R4', state: middleware.emitterFor('T').state }));
    assert.deepEqual(plainClient.map((e) => e.type), ['RUN_STARTED', 'RUN_FINISHED'], 'a client without stateSync is sent no catch-up');
    middleware.dispose();
  });

  test('an agent delta that does not apply: nothing goes out for it or later deltas until its next snapshot', T, async () => {
    const reports = [];
    const middleware = sequenceState({ onInconsistent: (info) => reports.push(info), emitter: { snapshotRatio: 100 } });
    const { AbstractAgent } = await import('@ag-ui/client');
    const { Observable } = await import('rxjs');
    class Broken extends AbstractAgent {
      run(i) {
        return new Observable((sub) => {
          for (const e of [
            { type: 'RUN_STARTED', threadId: i.threadId, runId: i.runId },
            { type: 'STATE_DELTA', delta: [{ op: 'add', path: '/a', value: 1 }] },
            { type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/missing/x', value: 1 }] },
            { type: 'STATE_DELTA', delta: [{ op: 'add', path: '/b', value: 2 }] },
            { type: 'STATE_SNAPSHOT', snapshot: { a: 1, b: 2, c: 3 }, timestamp: 7 },
            { type: 'STATE_DELTA', delta: [{ op: 'add', path: '/d', value: 4 }] },
            { type: 'RUN_FINISHED', threadId: i.threadId, runId: i.runId },
          ]) sub.next(e);
          sub.complete();
        });
      }
    }
    const out = await collect(middleware, new Broken(), input({ state: {}, forwardedProps: { stateSync: { lastSeq: null } } }));
    const stateEvents = out.filter((e) => e.type.startsWith('STATE_'));
    assert.deepEqual(stateEvents.map((e) => [e.type, e.metadata['agui-state-sync'].seq]), [['STATE_SNAPSHOT', 0], ['STATE_DELTA', 1], ['STATE_DELTA', 2], ['STATE_DELTA', 3]]);
    assert.equal(stateEvents[2].metadata['agui-state-sync'].baseSeq, 1, 'the snapshot went out as a delta from the last state sent');
    assert.equal(stateEvents[2].timestamp, 7, 'the agent\'s other fields ride along');
    assert.deepEqual(middleware.emitterFor('T').state, { a: 1, b: 2, c: 3, d: 4 });
    assert.deepEqual(reports.map((r) => [r.reason, r.error?.code ?? null]), [['refused', 'patch-failed'], ['suspended', null]]);
    middleware.dispose();
  });

  test('threads: LRU-bounded and expired after idleTtlMs', T, async (t) => {
    // Idle time on a mocked clock (Date.now() and the sweep's setInterval): a slow machine neither expires C
    // before it is looked at nor needs a real 80 ms to pass.
    t.mock.timers.enable({ apis: ['Date', 'setInterval'] });
    const middleware = sequenceState({ maxThreads: 2, idleTtlMs: 60 });
    const none = new CounterAgent({ target: 0 });
    for (const threadId of ['A', 'B', 'C']) await collect(middleware, none, input({ threadId }));
    assert.equal(middleware.threads, 2);
    assert.equal(middleware.emitterFor('A'), null, 'the least recently used went first');
    assert.notEqual(middleware.emitterFor('C'), null);
    t.mock.timers.tick(80);
    await collect(middleware, none, input({ threadId: 'D' }));
    assert.equal(middleware.emitterFor('B'), null);
    assert.equal(middleware.emitterFor('C'), null);
    assert.equal(middleware.threads, 1);
    assert.throws(() => sequenceState({ maxThreads: 0 }), (e) => e instanceof AguiSyncError && e.code === 'invalid-options');
    assert.throws(() => sequenceState({ emitter: { epoch: 'x' } }), TypeError);
    middleware.dispose();
  });
});

describe('StateSyncHttpAgent: API', () => {
  test('ready, stateSync before it, options, setState, clone', T, async () => {
    const agent = new StateSyncHttpAgent({ url: 'http://127.0.0.1:9/', initialState: { a: 1 } });
    assert.throws(() => agent.stateSync, (e) => e instanceof AguiSyncError && e.code === 'not-loaded');
    const sync = await agent.ready;
    assert.equal(sync, agent.stateSync);
    assert.equal(agent.state, sync.state);
    assert.deepEqual(plain(agent.state), { a: 1 });
    agent.setState({ a: 2 });
    assert.equal(agent.state, sync.state);
    assert.deepEqual(plain(sync.state), { a: 2 });
    assert.equal(sync.status, 'unverified');
    const copy = agent.clone();
    await copy.ready;
    assert.deepEqual(plain(copy.state), { a: 2 });
    assert.notEqual(copy.stateSync, sync);
    copy.dispose();
    agent.dispose();
    assert.throws(() => new StateSyncHttpAgent({ url: 'x', stateSync: { reorderWindow: -1 } }), (e) => e instanceof AguiSyncError && e.code === 'invalid-options');
    assert.throws(() => new StateSyncHttpAgent({ url: 'x', stateSync: { backoff: 3 } }), TypeError);
    assert.throws(() => new StateSyncHttpAgent(null), TypeError);
    const before = await createStateSync(); // the engine is shared; nothing leaks between instances
    before.dispose();
  });

  test('the main entry never imports @ag-ui/client or rxjs (whole static import graph)', () => {
    const seen = new Set();
    const bare = new Set();
    const visit = (file) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      const statics = text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g);
      const dynamics = text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g);
      for (const [, spec] of [...statics, ...dynamics]) {
        if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
        else bare.add(spec);
      }
    };
    visit(join(jsDir, 'src', 'index.js'));
    assert.ok(seen.has(join(jsDir, 'src', 'client', 'reconnect.js')), 'the graph was followed');
    for (const spec of bare) assert.doesNotMatch(spec, /^(@ag-ui\/|rxjs)/, `index.js reaches ${spec}`);
    assert.ok(![...seen].some((f) => /state-sync-agent|sequence-state|agent-apply|ag-ui\.js/.test(f)));
    assert.ok(readFileSync(join(repoRoot, 'js', 'src', 'ag-ui.js'), 'utf8').includes('StateSyncHttpAgent'));
  });
});
