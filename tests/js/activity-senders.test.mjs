// Activities through the senders (docs/wire.md section 11): the proxy and
// sequenceState() stamp an upstream's ACTIVITY_SNAPSHOT / ACTIVITY_DELTA on
// the thread's activities (the core's ActivityFacade), its repeated snapshots
// go out as deltas, a client that says where its activities are is caught up
// per activity, and a plain client's first event of an activity is its
// snapshot. The upstream is tests/support/upstreams.mjs (a plain AG-UI
// backend, activities unstamped).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { join } from 'node:path';
import { HttpAgent } from '@ag-ui/client';
import { buildScript, startUpstream } from '../support/upstreams.mjs';
import { connectClient, parseSse, readStream, runInput, stack } from './proxy-support.mjs';
import { jsDir, pkg, plain } from './support.mjs';

const { sequenceState } = await import(join(jsDir, 'src', 'ag-ui.js'));
const KEY = 'agui-state-sync';
const T = { timeout: 30000 };
const activityEvents = (events) => events.filter((e) => e.type === 'ACTIVITY_SNAPSHOT' || e.type === 'ACTIVITY_DELTA');

/** The client's activities as plain data: { messageId: content } for every synced one. */
function syncedContents(sync) {
  const out = {};
  for (const [id, a] of Object.entries(sync.activities)) if (a.status === 'synced') out[id] = plain(a.content);
  return out;
}

describe('the proxy stamps an upstream\'s activities', () => {
  const closers = [];
  after(async () => { for (const close of closers.reverse()) await close(); });

  for (const shape of ['docs', 'snapshots']) {
    test(`${shape} upstream: sequenced activity events, snapshots turned into deltas, the client verified`, T, async () => {
      const s = await stack({ upstream: { shape, script: buildScript({ seed: 3, steps: 12, activities: 2 }), stepMs: 0 } });
      closers.push(s.close);
      const sync = await pkg.createStateSync({ activities: true });
      const client = await connectClient(s.url('/agent'), runInput('t1', 'r1'), { sync });
      await client.done;
      const sent = activityEvents(parseSse(client.text()).map((e) => e.data).filter(Boolean));
      assert.ok(sent.every((e) => Number.isSafeInteger(e.metadata?.[KEY]?.seq)), 'every activity event is stamped');
      assert.ok(sent.some((e) => e.type === 'ACTIVITY_DELTA'), 'changes go out as deltas');
      assert.deepEqual(syncedContents(sync), s.upstream.activities('t1'));
      assert.ok(Object.values(sync.activities).every((a) => a.status === 'synced'));
      assert.equal(s.proxy.stats().upstreamActivityResyncs, 0);
      assert.deepEqual(s.errors, []);
      sync.dispose();
    });
  }

  test('a later run: a plain client gets each activity\'s snapshot first; a client that says where its activities are is caught up', T, async () => {
    const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed: 5, steps: 6, activities: 1 }), stepMs: 0 } });
    closers.push(s.close);
    const first = await readStream(s.url('/agent'), { input: runInput('t1', 'r1') });
    const seen = activityEvents(first.events.map((e) => e.data));
    assert.equal(seen[0].type, 'ACTIVITY_SNAPSHOT');
    const sync = await pkg.createStateSync({ activities: true });
    sync.feed(first.text);
    const positions = sync.activityPositions();
    assert.equal(positions.length, 1);

    const plainRun = await readStream(s.url('/agent'), { input: runInput('t1', 'r2') });
    const plainActivities = activityEvents(plainRun.events.map((e) => e.data));
    assert.equal(plainActivities[0].type, 'ACTIVITY_SNAPSHOT', 'a client that said nothing is sent the whole activity first');
    assert.ok(plainActivities.slice(1).every((e) => e.type === 'ACTIVITY_DELTA'));

    // A sequenced client that missed r2: its catch-up (a replay, or the snapshot when
    // cheaper) follows RUN_STARTED, then r3's changes are deltas on top of it.
    const stateSync = { lastSeq: sync.lastSeq, epoch: sync.epoch, activities: positions };
    const third = await readStream(s.url('/agent'), { input: runInput('t1', 'r3', { forwardedProps: { stateSync } }) });
    const events = third.events.map((e) => e.data);
    const caught = activityEvents(events);
    if (caught[0].type === 'ACTIVITY_DELTA') assert.equal(caught[0].metadata[KEY].baseSeq, positions[0].lastSeq);
    else assert.ok(caught[0].metadata[KEY].seq > positions[0].lastSeq);
    assert.ok(caught.slice(1).every((e) => e.type === 'ACTIVITY_DELTA'));
    sync.feed(third.text);
    assert.deepEqual(syncedContents(sync), s.upstream.activities('t1'));
    sync.dispose();
  });

  test('an upstream activity delta that does not apply: the proxy holds that activity, clients keep what it vouched for', T, async () => {
    // A hand-written upstream stream: the second delta's test op fails.
    const { startServer, writeAll } = await import('./ag-ui-support.mjs');
    const upstream = await startServer(({ input, res, encoder }) => {
      writeAll(res, encoder, [
        { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId },
        { type: 'ACTIVITY_SNAPSHOT', messageId: 'm1', activityType: 'form', content: { a: 1 } },
        { type: 'ACTIVITY_DELTA', messageId: 'm1', activityType: 'form', patch: [{ op: 'replace', path: '/a', value: 2 }] },
        { type: 'ACTIVITY_DELTA', messageId: 'm1', activityType: 'form', patch: [{ op: 'test', path: '/a', value: 9 }] },
        { type: 'ACTIVITY_DELTA', messageId: 'm1', activityType: 'form', patch: [{ op: 'replace', path: '/a', value: 3 }] },
        { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId },
      ]);
    });
    closers.push(upstream.close);
    const { createStateSyncProxy } = await import(join(jsDir, 'src', 'proxy.js'));
    const proxy = createStateSyncProxy({ upstream: upstream.url });
    const { serve } = await import('./proxy-support.mjs');
    const server = await serve(proxy);
    closers.push(async () => { proxy.close(); await server.close(); });
    const out = await readStream(server.url('/agent'), { input: runInput('t1', 'r1') });
    const sync = await pkg.createStateSync({ activities: true });
    sync.feed(out.text);
    assert.deepEqual(plain(sync.activities.m1.content), { a: 2 });
    assert.equal(sync.activities.m1.status, 'synced', 'the last content the proxy could vouch for');
    assert.equal(proxy.stats().upstreamActivityResyncs, 1);
    sync.dispose();
  });
});

describe('sequenceState() stamps an agent\'s activities', () => {
  test('an HttpAgent upstream behind the middleware: stamped, caught up per activity, the first of a run a snapshot', T, async () => {
    const upstream = await startUpstream({ shape: 'snapshots', script: buildScript({ seed: 7, steps: 8, activities: 2 }), stepMs: 0 });
    const middleware = sequenceState({ emitter: { snapshotRatio: 100 } });
    const next = new HttpAgent({ url: upstream.url });
    const collect = (input) => new Promise((resolve, reject) => {
      const events = [];
      middleware.run(input, next).subscribe({ next: (e) => events.push(e), error: reject, complete: () => resolve(events) });
    });
    try {
      const sync = await pkg.createStateSync({ activities: true });
      const feed = (events) => sync.feed(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(''));
      const first = await collect(runInput('t1', 'r1', { forwardedProps: { stateSync: { lastSeq: null, activities: [] } } }));
      const stamped = activityEvents(first);
      assert.ok(stamped.every((e) => Number.isSafeInteger(e.metadata?.[KEY]?.seq)));
      assert.ok(stamped.some((e) => e.type === 'ACTIVITY_DELTA'), 'the agent\'s repeated snapshots go out as deltas');
      feed(first);
      assert.deepEqual(syncedContents(sync), upstream.activities('t1'));

      const plainRun = await collect(runInput('t1', 'r2', { state: middleware.emitterFor('t1').state }));
      const firstOfEach = new Map();
      for (const e of activityEvents(plainRun)) if (!firstOfEach.has(e.messageId)) firstOfEach.set(e.messageId, e.type);
      assert.ok([...firstOfEach.values()].every((type) => type === 'ACTIVITY_SNAPSHOT'), 'a plain client: snapshots first');

      const stateSync = { lastSeq: sync.lastSeq, epoch: sync.epoch, activities: sync.activityPositions() };
      const third = await collect(runInput('t1', 'r3', { state: middleware.emitterFor('t1').state, forwardedProps: { stateSync } }));
      feed(third);
      assert.deepEqual(syncedContents(sync), upstream.activities('t1'));
      assert.ok(Object.values(sync.activities).every((a) => a.status === 'synced'));
      sync.dispose();
    } finally {
      middleware.dispose();
      await upstream.close();
    }
  });

  test('an agent activity delta that does not apply is dropped, with every later one of it, until its next snapshot', T, async () => {
    const reports = [];
    const middleware = sequenceState({ onInconsistent: (info) => reports.push(info), emitter: { snapshotRatio: 100 } });
    const { AbstractAgent } = await import('@ag-ui/client');
    const { Observable } = await import('rxjs');
    const form = (patch) => ({ type: 'ACTIVITY_DELTA', messageId: 'm1', activityType: 'form', patch });
    class Broken extends AbstractAgent {
      run(i) {
        return new Observable((sub) => {
          for (const e of [
            { type: 'RUN_STARTED', threadId: i.threadId, runId: i.runId },
            { type: 'ACTIVITY_SNAPSHOT', messageId: 'm1', activityType: 'form', content: { a: 1, note: 'keep' } },
            form([{ op: 'replace', path: '/missing/x', value: 1 }]),
            form([{ op: 'replace', path: '/a', value: 2 }]),
            { type: 'ACTIVITY_SNAPSHOT', messageId: 'm1', activityType: 'form', content: { a: 3, note: 'keep' }, timestamp: 4 },
            form([{ op: 'replace', path: '/a', value: 5 }]),
            { type: 'RUN_FINISHED', threadId: i.threadId, runId: i.runId },
          ]) sub.next(e);
          sub.complete();
        });
      }
    }
    const out = await new Promise((resolve, reject) => {
      const events = [];
      middleware.run(runInput('T', 'R'), new Broken()).subscribe({ next: (e) => events.push(e), error: reject, complete: () => resolve(events) });
    });
    const sent = activityEvents(out);
    assert.deepEqual(sent.map((e) => [e.type, e.metadata[KEY].seq]), [['ACTIVITY_SNAPSHOT', 0], ['ACTIVITY_DELTA', 1], ['ACTIVITY_DELTA', 2]]);
    assert.equal(sent[1].timestamp, 4, 'the agent\'s other fields ride along');
    assert.deepEqual(middleware.emitterFor('T').activities.content('m1'), { a: 5, note: 'keep' });
    assert.deepEqual(reports.map((r) => [r.reason, r.error?.code ?? null]), [['refused', 'patch-failed'], ['suspended', null]]);
    middleware.dispose();
  });
});
