// The AG-UI 1.0 event set carried intact (issue 25, item 3). A recorded 1.0
// stream (tests/vectors/agui_1_0_stream.json: every event type of
// @ag-ui/core 1.0, its optional fields, the three RUN_FINISHED outcomes and
// RUN_ERROR) is served by an upstream that encodes it with @ag-ui/encoder, as
// a backend does, and goes through the proxy, sequenceState() and
// StateSyncHttpAgent:
//  - every event that is not a state event comes out field for field as the
//    upstream sent it (the proxy's and sequenceState()'s wire), or as
//    @ag-ui/client's own HttpAgent delivers it straight from the upstream
//    (StateSyncHttpAgent's subscribers: both run @ag-ui/client's pipeline,
//    which expands the CHUNK forms);
//  - every stream we send is accepted by @ag-ui/client 1.0's own stages
//    (enforceEvents strips nothing and throws nothing, transformChunks,
//    verifyEvents) and by @ag-ui/core's EventSchemas, and carries no
//    `metadata: null`, `rawEvent: null` or non-integer `timestamp`;
//  - at a RUN_FINISHED that carries an interrupt, a plain client behind the
//    proxy gets the state as a STATE_SNAPSHOT right before it, a sequenced one
//    gets no snapshot and is synced at the agent's state (docs/wire.md section 8).
// Activities (ACTIVITY_SNAPSHOT / ACTIVITY_DELTA) are sequenced like state
// (docs/wire.md section 11), so, like state events, they are judged by what a
// client ends with: the same content per messageId, from valid events.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AbstractAgent, enforceEvents, HttpAgent, transformChunks, verifyEvents } from '@ag-ui/client';
import { EventType } from '@ag-ui/core';
import { EventSchemas } from '@ag-ui/core/schemas';
import fastJsonPatch from 'fast-json-patch';
import { from, lastValueFrom, toArray } from 'rxjs';
import { startSequencedServer, startServer, writeAll } from './ag-ui-support.mjs';
import { connectClient, readStream, runInput, stack, stackOn } from './proxy-support.mjs';
import { buildScript } from '../support/upstreams.mjs';
import { jsDir, plain, repoRoot } from './support.mjs';

const { StateSyncHttpAgent, sequenceState } = await import(join(jsDir, 'src', 'ag-ui.js'));
process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';
const T = { timeout: 60000 };

const RECORDING = JSON.parse(readFileSync(join(repoRoot, 'tests', 'vectors', 'agui_1_0_stream.json'), 'utf8'));
const STATE = new Set(['STATE_SNAPSHOT', 'STATE_DELTA']);
const ACTIVITY = new Set(['ACTIVITY_SNAPSHOT', 'ACTIVITY_DELTA']);
/** The events that must come out as they went in: not state, not activities, not our own CUSTOM notices. */
const carried = (events) => events.filter((e) => !STATE.has(e.type) && !ACTIVITY.has(e.type) && !String(e.name).startsWith('agui-state-sync.'));

/** The recorded run `runId`, on `threadId` (each test its own thread): a fresh copy of its events. */
function recorded(runId, threadId) {
  const run = RECORDING.runs.find((r) => r.runId === runId);
  return run.events.map((event) => {
    const copy = structuredClone(event);
    if ('threadId' in copy) copy.threadId = threadId;
    if (copy.input) copy.input.threadId = threadId;
    return copy;
  });
}
const runIds = RECORDING.runs.map((r) => r.runId);
const runOf = (runId) => RECORDING.runs.find((r) => r.runId === runId);
/** The state the recording's upstream holds after `runId` (applied with fast-json-patch, not our code). */
function upstreamState(runId) {
  let state = {};
  for (const id of runIds.slice(0, runIds.indexOf(runId) + 1)) {
    for (const e of recorded(id, 'x')) {
      if (e.type === 'STATE_SNAPSHOT') state = e.snapshot;
      else if (e.type === 'STATE_DELTA') state = fastJsonPatch.applyPatch(structuredClone(state), e.delta, true, false).newDocument;
    }
  }
  return state;
}

/** Each activity's content at the end of `events` (fast-json-patch). */
function activities(events) {
  const contents = {};
  for (const e of events) {
    if (e.type === 'ACTIVITY_SNAPSHOT' && (e.replace !== false || !(e.messageId in contents))) contents[e.messageId] = e.content;
    else if (e.type === 'ACTIVITY_DELTA') contents[e.messageId] = fastJsonPatch.applyPatch(structuredClone(contents[e.messageId]), e.patch, true, false).newDocument;
  }
  return contents;
}

/** 1.0 ends a run on these, so nothing we send may carry one. */
function assertWellFormed(event) {
  const what = JSON.stringify(event).slice(0, 200);
  if ('metadata' in event) assert.ok(event.metadata !== null && typeof event.metadata === 'object' && !Array.isArray(event.metadata), `metadata must be an object: ${what}`);
  if ('timestamp' in event) assert.ok(Number.isSafeInteger(event.timestamp), `timestamp must be an integer: ${what}`);
  assert.notEqual(event.rawEvent, null, `rawEvent must not be null: ${what}`);
}

/**
 * One run's stream as @ag-ui/client 1.0 takes it: each event valid under
 * EventSchemas; enforceEvents strips nothing (its output is the input) and
 * throws nothing; transformChunks and verifyEvents accept the run.
 */
async function assertAccepted(events) {
  for (const event of events) {
    assertWellFormed(event);
    const parsed = EventSchemas.safeParse(event);
    assert.ok(parsed.success, `${event.type}: ${parsed.error?.message}`);
  }
  const enforced = await lastValueFrom(from(events).pipe(enforceEvents(), toArray()));
  assert.deepEqual(enforced, events, 'enforceEvents stripped or dropped nothing');
  await lastValueFrom(from(structuredClone(events)).pipe(transformChunks(), verifyEvents(), toArray()));
}

/** An upstream that answers run R with the recording's run R, encoded by @ag-ui/encoder. */
async function recordedUpstream() {
  return startServer(({ input, res, encoder }) => writeAll(res, encoder, recorded(input.runId, input.threadId)));
}

/** The recording as an @ag-ui/client agent (for sequenceState()). */
class RecordedAgent extends AbstractAgent {
  run(input) {
    return from(recorded(input.runId, input.threadId));
  }
}

/** The RunAgentInput of run `runId` on `threadId`, from a client holding `state`. */
function inputOf(runId, threadId, state, forwardedProps = {}) {
  const { messages = [], resume } = runOf(runId).input;
  return { threadId, runId, state, messages, tools: [], context: [], forwardedProps, ...(resume ? { resume } : {}) };
}

/** Every run of the recording through `agent` (runAgent, as an app calls it): the events its subscribers saw. */
async function driveAgent(agent) {
  const seen = [];
  agent.subscribe({ onEvent: ({ event }) => { seen.push(structuredClone(event)); } });
  for (const run of RECORDING.runs) await agent.runAgent({ runId: run.runId, ...(run.input.resume ? { resume: run.input.resume } : {}) });
  return seen;
}

/** The control: @ag-ui/client's HttpAgent straight on the upstream. */
async function control(upstreamUrl, threadId) {
  const agent = new HttpAgent({ url: upstreamUrl, threadId, initialMessages: RECORDING.runs[0].input.messages });
  return { agent, seen: await driveAgent(agent) };
}

const withoutActivities = (messages) => plain(messages).filter((m) => m.role !== 'activity');

test('the recording: every event type of @ag-ui/core 1.0, each run accepted by @ag-ui/client 1.0', T, async () => {
  const types = new Set(RECORDING.runs.flatMap((run) => run.events.map((e) => e.type)));
  assert.deepEqual([...types].sort(), Object.values(EventType).sort());
  const outcomes = RECORDING.runs.map((run) => run.events.at(-1)).map((e) => e.outcome?.type ?? e.type);
  assert.deepEqual(outcomes, ['success', 'interrupt', 'cancelled', 'RUN_ERROR']);
  for (const run of RECORDING.runs) await assertAccepted(recorded(run.runId, 'x'));
});

describe('through the proxy', () => {
  let upstream;
  let proxy;
  before(async () => {
    upstream = await recordedUpstream();
    proxy = await stackOn(upstream);
  });
  after(async () => proxy.close());

  test('a plain client: every non-state event field for field, each stream accepted, the state snapshot before the interrupt', T, async () => {
    let state = {};
    for (const runId of runIds) {
      const { events } = await readStream(proxy.url(), { input: inputOf(runId, 'plain', state) });
      const sent = events.map((e) => e.data);
      assert.deepEqual(carried(sent), carried(recorded(runId, 'plain')), `run ${runId}`);
      assert.deepEqual(activities(sent), activities(recorded(runId, 'plain')));
      await assertAccepted(sent);
      for (const e of sent) {
        if (e.type === 'STATE_SNAPSHOT') state = e.snapshot;
        else if (e.type === 'STATE_DELTA') state = fastJsonPatch.applyPatch(structuredClone(state), e.delta, true, false).newDocument;
      }
      assert.deepEqual(state, upstreamState(runId), `the plain client's state after ${runId}`);
      if (runId !== 'r2') continue;
      const [boundary, finished] = sent.slice(-2);
      assert.equal(finished.outcome.type, 'interrupt');
      assert.equal(boundary.type, 'STATE_SNAPSHOT', 'the state, whole, right before the interrupt');
      assert.deepEqual(boundary.snapshot, upstreamState('r2'));
      const states = sent.filter((e) => STATE.has(e.type));
      assert.equal(states.at(-2).type, 'STATE_DELTA', 'the upstream\'s own snapshot went out as a delta');
      assert.equal(boundary.metadata['agui-state-sync'].seq, states.at(-2).metadata['agui-state-sync'].seq, 'at the seq the delta reached');
    }
    assert.deepEqual(proxy.errors, []);
  });

  test('a sequenced client: no snapshot at the interrupt, synced at the agent\'s state; every non-state event field for field', T, async () => {
    let sync;
    for (const runId of runIds) {
      const position = sync ? { lastSeq: sync.lastSeq, epoch: sync.epoch, reason: null, held: [] } : { lastSeq: null, epoch: null, reason: null, held: [] };
      const client = await connectClient(proxy.url(), inputOf(runId, 'sequenced', sync?.state ?? {}, { stateSync: position }), sync ? { sync } : {});
      await client.done;
      sync = client.sync;
      const text = client.text();
      const sent = text.split('\n\n').filter((b) => b.includes('data: ')).map((b) => JSON.parse(b.slice(b.indexOf('data: ') + 6)));
      assert.deepEqual(carried(sent), carried(recorded(runId, 'sequenced')), `run ${runId}`);
      await assertAccepted(sent);
      assert.equal(sync.status, 'synced');
      assert.deepEqual(plain(sync.state), upstreamState(runId));
      if (runId !== 'r2') continue;
      assert.deepEqual(sent.slice(-2).map((e) => e.type), ['MESSAGES_SNAPSHOT', 'RUN_FINISHED'], 'the upstream\'s events as it sent them');
      assert.equal(sent.filter((e) => STATE.has(e.type)).at(-1).type, 'STATE_DELTA', 'its seqs prove the state: no snapshot');
      assert.ok(sync.guard.view('/proposal').ok, 'the person can approve the proposal at the interrupt');
    }
    sync.dispose();
  });

  test('StateSyncHttpAgent sees what HttpAgent sees straight from the upstream; HttpAgent through the proxy too', T, async () => {
    const straight = await control(upstream.url, 'agent');
    const ours = new StateSyncHttpAgent({ url: proxy.url(), threadId: 'agent', initialMessages: RECORDING.runs[0].input.messages });
    await ours.ready;
    const mine = await driveAgent(ours);
    mine.forEach(assertWellFormed);
    assert.deepEqual(carried(mine), carried(straight.seen));
    assert.deepEqual(plain(ours.state), straight.agent.state);
    assert.deepEqual(plain(ours.state), upstreamState('r4'));
    assert.deepEqual(withoutActivities(ours.messages), withoutActivities(straight.agent.messages));
    assert.equal(ours.stateSync.status, 'synced');
    ours.dispose();
    const plainAgent = new HttpAgent({ url: proxy.url(), threadId: 'plain-agent', initialMessages: RECORDING.runs[0].input.messages });
    const theirs = await driveAgent(plainAgent); // @ag-ui/client's whole pipeline: its SSE parser, enforcement and verifier
    const straightPlain = await control(upstream.url, 'plain-agent');
    assert.deepEqual(carried(theirs), carried(straightPlain.seen));
    assert.deepEqual(plainAgent.state, straightPlain.agent.state);
  });
});

test('the proxy\'s own events are accepted too: the upstream-inconsistent notices, RUN_ERROR upstream-failed, an approval refused', T, async () => {
  const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed: 3, steps: 8 }), stepMs: 0, faults: { badDeltaAt: 2, snapshotAt: 5 } } });
  try {
    const held = (await readStream(s.url(), { input: runInput('own', 'o1') })).events.map((e) => e.data);
    assert.deepEqual(held.filter((e) => e.type === 'CUSTOM').map((e) => e.name), ['agui-state-sync.upstream-inconsistent', 'agui-state-sync.upstream-consistent']);
    await assertAccepted(held);
    s.upstream.setFaults({ noFinish: true });
    const failed = (await readStream(s.url(), { input: runInput('own', 'o2') })).events.map((e) => e.data);
    assert.equal(failed.at(-1).code, 'upstream-failed');
    await assertAccepted(failed);
    s.upstream.setFaults({});
    const approval = { path: '/title', seq: 1, digest: `sha256:${'0'.repeat(64)}` };
    const resume = [{ interruptId: 'i1', status: 'resolved', payload: { approved: true, approval } }];
    const refused = (await readStream(s.url(), { input: runInput('own', 'o3', { resume }) })).events.map((e) => e.data);
    assert.equal(refused.at(-1).code, 'approval-stale');
    await assertAccepted(refused);
  } finally {
    await s.close();
  }
});

describe('through sequenceState()', () => {
  let upstream;
  let middleware;
  let served;
  before(async () => {
    upstream = await recordedUpstream();
    middleware = sequenceState();
    served = await startSequencedServer(middleware, new RecordedAgent());
  });
  after(async () => {
    await served.close();
    await upstream.close();
    middleware.dispose();
  });

  for (const [who, forwardedProps] of [['a plain client', () => ({})], ['a sequenced client', (sync) => ({ stateSync: sync })]]) {
    test(`${who}: every non-state event field for field, each stream accepted`, T, async () => {
      const threadId = `mw-${who}`;
      let state = {};
      let position = { lastSeq: null, epoch: null };
      for (const runId of runIds) {
        const { events } = await readStream(served.url, { input: inputOf(runId, threadId, state, forwardedProps(position)) });
        const sent = events.map((e) => e.data);
        assert.deepEqual(carried(sent), carried(recorded(runId, threadId)), `run ${runId}`);
        assert.deepEqual(activities(sent), activities(recorded(runId, threadId)));
        await assertAccepted(sent);
        const emitter = middleware.emitterFor(threadId);
        state = plain(emitter.state);
        position = { lastSeq: emitter.seq, epoch: emitter.epoch };
        assert.deepEqual(state, upstreamState(runId));
      }
    });
  }

  test('StateSyncHttpAgent sees what HttpAgent sees straight from the upstream', T, async () => {
    const straight = await control(upstream.url, 'mw-agent');
    const ours = new StateSyncHttpAgent({ url: served.url, threadId: 'mw-agent', initialMessages: RECORDING.runs[0].input.messages });
    await ours.ready;
    const mine = await driveAgent(ours);
    mine.forEach(assertWellFormed);
    assert.deepEqual(carried(mine), carried(straight.seen));
    assert.deepEqual(plain(ours.state), straight.agent.state);
    assert.deepEqual(withoutActivities(ours.messages), withoutActivities(straight.agent.messages));
    assert.equal(ours.stateSync.status, 'synced');
    ours.dispose();
  });

  test('the state events it stamps are well formed even when the agent\'s were not (metadata: null, rawEvent: null, timestamp 1.5)', T, async () => {
    class Sloppy extends AbstractAgent {
      run(input) {
        return from([
          { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId },
          { type: 'STATE_SNAPSHOT', snapshot: { a: 1 }, metadata: null, rawEvent: null, timestamp: 1.5, subagentRunId: null },
          { type: 'STATE_DELTA', delta: [{ op: 'add', path: '/b', value: 2 }], metadata: {}, rawEvent: { kept: true }, timestamp: 7 },
          { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId },
        ]);
      }
    }
    const own = sequenceState();
    const events = await lastValueFrom(own.run(inputOf('r3', 'sloppy', {}, { stateSync: { lastSeq: null } }), new Sloppy()).pipe(toArray()));
    await assertAccepted(events);
    const [first, second] = events.filter((e) => STATE.has(e.type)).slice(-2); // after the catch-up
    assert.equal(first.timestamp, undefined);
    assert.ok(!('rawEvent' in first) && !('subagentRunId' in first));
    assert.deepEqual([second.timestamp, second.rawEvent], [7, { kept: true }], 'the agent\'s well-formed fields ride along');
    own.dispose();
  });
});
