// agui-state-sync/proxy on real sockets: AG-UI upstreams written with the real
// @ag-ui/encoder (tests/support/upstreams.mjs) behind createStateSyncProxy,
// clients built from createStateSync + connectStateSync, and the real
// @ag-ui/client HttpAgent for pass-through.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { describe, test } from 'node:test';
import { HttpAgent } from '@ag-ui/client';
import { buildScript, messageTexts, SHAPES } from '../support/upstreams.mjs';
import { pkg, plain } from './support.mjs';
import {
  connectClient, createStateSync, isOneOf, parseSse, proxyModule, readStream, runInput, stack, until, upstreamLike,
} from './proxy-support.mjs';

const { memoryStorage } = pkg;

const { EVENTS_LOST, HEADER_RESUME, UPSTREAM_CONSISTENT, UPSTREAM_INCONSISTENT } = proxyModule;
const T = { timeout: 20000 };

/** A state the size of a real one: `n` items of about 200 bytes. */
function bigState(n) {
  return {
    title: 'plan',
    counter: 0,
    items: Array.from({ length: n }, (_, i) => ({ id: `seed${i}`, label: `item ${i} `.padEnd(180, 'x') })),
  };
}

describe('proxy: sequencing an unsequenced upstream', () => {
  for (const shape of SHAPES) {
    test(`${shape} upstream: the client ends synced on the upstream's state; every other event passes through unchanged`, T, async () => {
      const s = await stack({ upstream: { shape, script: buildScript({ seed: 3, steps: 14 }), stepMs: 2 } });
      try {
        const client = await connectClient(s.url(), runInput('t1', 'r1'));
        await client.done;
        assert.equal(client.sync.status, 'synced');
        assert.deepEqual(plain(client.sync.state), s.upstream.state('t1'));
        const [request] = s.upstream.requests;
        assert.deepEqual(upstreamLike(client.events), upstreamLike(request.events));
        for (const state of client.synced) assert.ok(isOneOf(state, s.upstream.history('t1')), 'synced on a state the upstream held');
        // Every event the proxy sent has an SSE id; state events are sequenced.
        const blocks = client.text().split('\n\n').filter((b) => b.includes('data:'));
        assert.ok(blocks.every((b) => /^id: [A-Za-z0-9_-]{22}:\d+\n/.test(b)), 'an id on every event');
        const applied = client.outcomes.filter((o) => o.kind === 'applied');
        assert.ok(applied.length > 0 && applied.every((o) => Number.isSafeInteger(o.seq)));
        assert.deepEqual(s.errors, []);
      } finally {
        await s.close();
      }
    });
  }

  test('a snapshot-only upstream reaches the client as one snapshot, then deltas', T, async () => {
    const s = await stack({
      upstream: { shape: 'snapshots', script: buildScript({ seed: 5, steps: 20, textEvery: 0, toolCall: false }), stepMs: 1, initialState: bigState(60) },
    });
    try {
      const client = await connectClient(s.url(), runInput('t1', 'r1'));
      await client.done;
      const types = client.outcomes.filter((o) => o.kind === 'applied').map((o) => o.type);
      assert.equal(types[0], 'STATE_SNAPSHOT');
      assert.deepEqual(types.slice(1), Array(20).fill('STATE_DELTA'));
      assert.deepEqual(plain(client.sync.state), s.upstream.state('t1'));
      const upstreamStateBytes = s.upstream.requests[0].events
        .filter((e) => e.type === 'STATE_SNAPSHOT')
        .reduce((sum, e) => sum + JSON.stringify(e).length, 0);
      assert.ok(client.bytes < upstreamStateBytes / 4, `${client.bytes} client bytes for ${upstreamStateBytes} upstream snapshot bytes`);
    } finally {
      await s.close();
    }
  });

  test('the real @ag-ui/client HttpAgent through the proxy: same events, same final state', T, async () => {
    const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed: 9, steps: 10 }), stepMs: 1 } });
    try {
      const agent = new HttpAgent({ url: s.url(), threadId: 'ta' });
      const seen = [];
      await agent.runAgent({ runId: 'ra' }, { onEvent: ({ event }) => void seen.push(event) });
      const [request] = s.upstream.requests;
      const strip = (events) => upstreamLike(events).map((e) => JSON.parse(JSON.stringify(e)));
      assert.deepEqual(strip(seen), strip(request.events));
      assert.deepEqual(plain(agent.state), s.upstream.state('ta'));
      // What left the host: the RunAgentInput (minus forwardedProps.stateSync), JSON, SSE accepted.
      assert.equal(request.input.threadId, 'ta');
      assert.equal(request.headers.accept, 'text/event-stream');
    } finally {
      await s.close();
    }
  });

  test('a later run catches the client up from where it is: nothing when current, a replay when a little behind', T, async () => {
    const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed: 4, steps: 6 }), stepMs: 1, initialState: bigState(20) } });
    try {
      const sync = await createStateSync();
      const first = await connectClient(s.url(), runInput('t1', 'r1'), { sync });
      await first.done;
      // Second run with the same engine: forwardedProps.stateSync says it is current.
      s.upstream.setFaults({});
      const second = await connectClient(s.url(), runInput('t1', 'r2'), { sync });
      await second.done;
      const secondApplied = second.outcomes.filter((o) => o.kind === 'applied');
      assert.deepEqual(secondApplied.map((o) => o.type), Array(6).fill('STATE_DELTA'), 'no snapshot for a current client');
      assert.equal(s.upstream.requests.length, 2, 'the first run id did not resume the finished run');
      assert.deepEqual(plain(sync.state), s.upstream.state('t1'));
      // A client two seqs behind (headers) gets exactly the two deltas it missed.
      const behind = sync.lastSeq - 2;
      const third = await readStream(s.url(), {
        input: runInput('t1', 'r3'),
        headers: { 'x-agui-state-seq': String(behind), 'x-agui-state-epoch': sync.epoch },
      });
      const [started, ...rest] = third.events.map((e) => e.data);
      assert.equal(started.type, 'RUN_STARTED');
      assert.deepEqual(rest.slice(0, 2).map((e) => [e.type, e.metadata['agui-state-sync'].baseSeq]), [['STATE_DELTA', behind], ['STATE_DELTA', behind + 1]]);
    } finally {
      await s.close();
    }
  });
});

describe('proxy: an inconsistent or failing upstream', () => {
  test('a delta that does not apply holds state events; clients are told, and the next snapshot heals', T, async () => {
    const s = await stack({
      upstream: { shape: 'docs', script: buildScript({ seed: 7, steps: 12 }), stepMs: 1, faults: { badDeltaAt: 3, snapshotAt: 8 } },
    });
    try {
      const client = await connectClient(s.url(), runInput('t1', 'r1'));
      await client.done;
      const history = s.upstream.history('t1');
      for (const state of client.synced) assert.ok(isOneOf(state, history), 'never a state the upstream did not hold');
      const names = client.events.filter((e) => e.type === 'CUSTOM').map((e) => e.name);
      assert.deepEqual(names, [UPSTREAM_INCONSISTENT, UPSTREAM_CONSISTENT]);
      const notice = client.events.find((e) => e.name === UPSTREAM_INCONSISTENT);
      assert.equal(notice.value.reason, 'precondition-failed');
      // Between the two notices: exactly the one state event of the healing snapshot.
      const at = (name) => client.outcomes.findIndex((o) => o.kind === 'event' && o.event.name === name);
      const between = client.outcomes.slice(at(UPSTREAM_INCONSISTENT) + 1, at(UPSTREAM_CONSISTENT)).filter((o) => o.kind === 'applied');
      assert.equal(between.length, 1);
      // Held at the state before the bad delta (beats 0-2 applied: history[3]).
      const before = client.outcomes.slice(0, at(UPSTREAM_INCONSISTENT)).filter((o) => o.kind === 'applied').at(-1);
      assert.deepEqual(plain(before.state), history[3]);
      assert.equal(client.sync.status, 'synced');
      assert.deepEqual(plain(client.sync.state), s.upstream.state('t1'));
      assert.equal(s.proxy.stats().upstreamInconsistent, 1);
    } finally {
      await s.close();
    }
  });

  test('a run that ends held leaves the last vouched state; the next run re-anchors it', T, async () => {
    const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed: 8, steps: 6 }), stepMs: 1, faults: { badDeltaAt: 2 } } });
    try {
      const sync = await createStateSync();
      const first = await connectClient(s.url(), runInput('t1', 'r1'), { sync });
      await first.done;
      assert.deepEqual(plain(sync.state), s.upstream.history('t1')[2], 'the state before the bad delta');
      s.upstream.setFaults({});
      const second = await connectClient(s.url(), runInput('t1', 'r2'), { sync });
      await second.done;
      assert.deepEqual(plain(sync.state), s.upstream.state('t1'));
      assert.equal(sync.status, 'synced');
    } finally {
      await s.close();
    }
  });

  test('an HTTP error from the upstream reaches the client as it was: its status and body, no run (SECURITY.md)', T, async () => {
    const s = await stack({ upstream: { shape: 'docs', script: buildScript({ steps: 4 }), stepMs: 1, faults: { status: 502 } } });
    try {
      const response = await fetch(s.url(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(runInput('t1', 'r1')) });
      assert.equal(response.status, 502);
      await response.arrayBuffer();
      assert.equal(s.proxy.stats().runsStarted, 0);
      assert.equal(s.proxy.stats().threads, 0, 'no thread');
    } finally {
      await s.close();
    }
  });

  for (const [name, faults, pattern] of [
    ['a socket destroyed mid-run', { breakAfterEvents: 6 }, /broke/],
    ['a stream that ends without RUN_FINISHED', { noFinish: true }, /ended before RUN_FINISHED/],
  ]) {
    test(`${name} upstream becomes RUN_ERROR`, T, async () => {
      const s = await stack({ upstream: { shape: 'docs', script: buildScript({ steps: 4 }), stepMs: 1, faults } });
      try {
        const client = await connectClient(s.url(), runInput('t1', 'r1'));
        await client.done; // RUN_ERROR then a clean end: the loop stops
        const last = client.events.at(-1);
        assert.equal(last.type, 'RUN_ERROR');
        assert.equal(last.code, 'upstream-failed');
        assert.match(last.message, pattern);
        assert.notEqual(client.sync.status, 'resyncing');
      } finally {
        await s.close();
      }
    });
  }

  test('an unreachable upstream becomes RUN_ERROR', T, async () => {
    const s = await stack({ upstream: { shape: 'docs' } });
    try {
      await s.upstream.close(); // nothing listens on its port any more
      const result = await readStream(s.url(), { input: runInput('t1', 'r1') });
      assert.equal(result.status, 200);
      assert.deepEqual(result.events.map((e) => e.data.type), ['RUN_ERROR']);
      assert.equal(result.events[0].data.code, 'upstream-failed');
      assert.equal(s.errors[0]?.code, 'upstream-failed');
    } finally {
      await s.close().catch(() => {});
    }
  });
});

describe('proxy: resumable streams', () => {
  test('Last-Event-ID resumes exactly after that event: chat text, tool calls and state, each once', T, async () => {
    const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed: 11, steps: 16 }), stepMs: 3 } });
    try {
      const input = runInput('t1', 'r1');
      const first = await readStream(s.url(), { input, stop: (events) => events.length >= 15 });
      // The run moves on while the client is away (or has ended): the resume has events to catch up on.
      const [request] = s.upstream.requests;
      const atCut = request.events.length;
      await until(() => request.completed || request.events.length > atCut, 'the run to move on without the client');
      const lastId = first.events.at(-1).id;
      const rest = await readStream(s.url(), { input, headers: { 'last-event-id': lastId } });
      assert.equal(rest.headers.get(HEADER_RESUME.toLowerCase()), 'exact');
      const all = [...first.events, ...rest.events];
      const ns = all.map((e) => Number(e.id.split(':')[1]));
      assert.deepEqual(ns, ns.map((_, i) => i + 1), 'ids run 1, 2, 3, ... without a gap or a repeat');
      assert.equal(s.upstream.requests.length, 1, 'the reconnect did not start the agent again');
      assert.equal(request.completed, true);
      const events = all.map((e) => e.data);
      assert.deepEqual(upstreamLike(events), upstreamLike(request.events));
      assert.deepEqual(messageTexts(events), messageTexts(request.events));
      // The concatenated bytes leave an engine synced on the upstream's state.
      const sync = await createStateSync();
      sync.feed(first.text + rest.text);
      assert.equal(sync.status, 'synced');
      assert.deepEqual(plain(sync.state), s.upstream.state('t1'));
    } finally {
      await s.close();
    }
  });

  test('a client whose state does not line up with its Last-Event-ID is caught up first, then gets the rest of the events', T, async () => {
    const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed: 12, steps: 16 }), stepMs: 3 } });
    try {
      const input = runInput('t1', 'r1');
      const first = await readStream(s.url(), { input, stop: (events) => events.length >= 20 });
      const sync = await createStateSync();
      sync.feed(first.text);
      const lastId = first.events.at(-1).id;
      // Its state claims a mismatching seq (e.g. another engine): caught up by the catch-up rules.
      const rest = await readStream(s.url(), {
        input,
        headers: { 'last-event-id': lastId, 'x-agui-state-seq': '1', 'x-agui-state-epoch': sync.epoch, 'x-agui-resync-reason': 'patch-failed' },
      });
      assert.equal(rest.headers.get(HEADER_RESUME.toLowerCase()), 'caught-up');
      assert.equal(rest.events[0].data.type, 'STATE_SNAPSHOT');
      assert.equal(rest.events[0].id, lastId, 'the catch-up re-states the resume point');
      sync.feed(rest.text);
      assert.equal(sync.status, 'synced');
      assert.deepEqual(plain(sync.state), s.upstream.state('t1'));
      const [request] = s.upstream.requests;
      const events = [...first.events, ...rest.events].map((e) => e.data);
      assert.deepEqual(messageTexts(events), messageTexts(request.events));
    } finally {
      await s.close();
    }
  });

  test('a resume from before the bounded log: the catch-up, an events-lost notice, the events still held', T, async () => {
    const s = await stack({
      upstream: { shape: 'docs', script: buildScript({ seed: 13, steps: 20 }), stepMs: 1 },
      proxy: { maxRunBufferBytes: 1500 },
    });
    try {
      const input = runInput('t1', 'r1');
      const first = await readStream(s.url(), { input, stop: (events) => events.length >= 3 });
      await until(() => s.upstream.requests[0]?.completed, 'the upstream run');
      const sync = await createStateSync();
      sync.feed(first.text);
      const rest = await readStream(s.url(), {
        input,
        headers: { 'last-event-id': first.events.at(-1).id, 'x-agui-state-seq': String(sync.lastSeq), 'x-agui-state-epoch': sync.epoch },
      });
      assert.equal(rest.headers.get(HEADER_RESUME.toLowerCase()), 'lost');
      const lost = rest.events.find((e) => e.data.name === EVENTS_LOST);
      assert.ok(lost, 'the client is told events were lost');
      sync.feed(rest.text);
      assert.equal(sync.status, 'synced');
      assert.deepEqual(plain(sync.state), s.upstream.state('t1'));
      assert.ok(s.proxy.stats().bufferedBytes <= 1500 + 600);
    } finally {
      await s.close();
    }
  });

  test('a POST of a runId that is live on its thread attaches to it instead of starting the agent twice', T, async () => {
    const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed: 14, steps: 10 }), stepMs: 5 } });
    try {
      const input = runInput('t1', 'r1');
      const first = readStream(s.url(), { input });
      await until(() => s.upstream.requests.length === 1, 'the first request');
      const second = await readStream(s.url(), { input });
      await first;
      assert.equal(s.upstream.requests.length, 1);
      assert.equal(second.events.at(-1).data.type, 'RUN_FINISHED');
    } finally {
      await s.close();
    }
  });
});

describe('proxy: heartbeats', () => {
  test('an idle stream gets ": hb <seq>" with the last seq it sent', T, async () => {
    // The upstream goes quiet after its script and finishes only once the client has heard two heartbeats: a
    // slow machine makes the wait longer, never the beats fewer.
    let twoBeats;
    const hold = new Promise((resolve) => { twoBeats = resolve; });
    const s = await stack({
      upstream: { shape: 'docs', script: buildScript({ seed: 2, steps: 3 }), stepMs: 1, faults: { hold } },
      proxy: { heartbeatMs: 40 },
    });
    try {
      const onText = (text) => { if ((text.match(/^: hb \d+$/gm) ?? []).length >= 2) twoBeats(); };
      const result = await readStream(s.url(), { input: runInput('t1', 'r1'), onText });
      // Each beat against the seq of the last state event before it in the stream: a loaded machine may leave the
      // stream idle for 40 ms mid-script too, and that beat must carry the seq sent so far, not the final one.
      const beats = [];
      let last = null;
      for (const block of result.text.split('\n\n')) {
        const beat = /^: hb (\d+)$/m.exec(block);
        if (beat && last !== null) beats.push({ seq: Number(beat[1]), last });
        const [event] = parseSse(`${block}\n\n`).filter((e) => e.data?.metadata?.['agui-state-sync']?.seq !== undefined);
        if (event) last = event.data.metadata['agui-state-sync'].seq;
      }
      assert.ok(beats.length >= 2, result.text);
      assert.deepEqual(beats.filter((b) => b.seq !== b.last), [], 'every beat carries the last seq sent before it');
    } finally {
      await s.close();
    }
  });

  test('a client restored from its checkpoint that missed nothing is synced at once: a heartbeat follows its empty catch-up', T, async () => {
    // Periodic heartbeats too rare to help: only the one after the catch-up can end the 'restored' resync.
    const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed: 2, steps: 4 }), stepMs: 1 }, proxy: { heartbeatMs: 60000 } });
    try {
      const storage = memoryStorage();
      const before = await createStateSync({ persist: { key: 'k', storage } });
      await (await connectClient(s.url(), runInput('t1', 'r1'), { sync: before })).done;
      const { lastSeq, lastEventId } = before;
      await before.flush();
      before.dispose();
      const restored = await createStateSync({ persist: { key: 'k', storage } });
      assert.deepEqual([restored.status, restored.resyncRequest()?.reason, restored.lastSeq], ['resyncing', 'restored', lastSeq]);
      assert.ok(lastEventId, 'the checkpoint knows the stream position');
      const again = await connectClient(s.url(), runInput('t1', 'r1'), { sync: restored });
      await again.done;
      assert.equal(restored.status, 'synced');
      assert.equal(restored.lastSeq, lastSeq, 'nothing was missed: nothing was sent');
      assert.match(again.text(), new RegExp(`^: hb ${lastSeq}$`, 'm'));
      assert.equal(restored.metrics().snapshots, 0);
      restored.dispose();
    } finally {
      await s.close();
    }
  });
});

describe('proxy: a broken connection is not an abort', () => {
  const slow = () => ({ shape: 'docs', script: buildScript({ seed: 21, steps: 30 }), stepMs: 15 });
  // A run that only ends when the proxy aborts it (its RUN_FINISHED waits on a hold never released): it is still
  // going when the grace period runs out, however slowly the machine gets there.
  const unfinished = () => ({ ...slow(), faults: { hold: new Promise(() => {}) } });

  test('a cut client resumes within the grace period; the upstream run was never aborted', T, async () => {
    const s = await stack({ upstream: slow() });
    try {
      const input = runInput('t1', 'r1');
      const first = await readStream(s.url(), { input, stop: (events) => events.length >= 8 });
      const [request] = s.upstream.requests;
      const atCut = request.events.length;
      await until(() => request.completed || request.events.length > atCut + 3, 'the run to go on without a client');
      // A GET with just the Last-Event-ID resumes it too.
      const rest = await readStream(s.url(), { method: 'GET', headers: { 'last-event-id': first.events.at(-1).id } });
      assert.equal(rest.events.at(-1).data.type, 'RUN_FINISHED');
      await request.closed;
      assert.equal(request.completed, true);
      assert.equal(request.aborted, false);
      assert.deepEqual(s.proxy.stats().aborts, { client: 0, abandoned: 0 });
    } finally {
      await s.close();
    }
  });

  test('an explicit abort (POST X-AGUI-Abort: <runId>) aborts the upstream run', T, async () => {
    const s = await stack({ upstream: unfinished() }); // live at the abort
    try {
      const input = runInput('t1', 'r1');
      const reading = readStream(s.url(), { input, headers: { authorization: 'Bearer a' } });
      await until(() => s.upstream.requests[0]?.events.length >= 5, 'the run to start');
      const wrong = await fetch(s.url(), { method: 'POST', headers: { 'x-agui-abort': 'r1', authorization: 'Bearer b' } });
      assert.equal(wrong.status, 404, 'other credentials cannot abort it');
      const response = await fetch(s.url(), { method: 'POST', headers: { 'x-agui-abort': 'r1', authorization: 'Bearer a' } });
      assert.equal(response.status, 202);
      assert.deepEqual(await response.json(), { aborted: true });
      const [request] = s.upstream.requests;
      await request.closed;
      assert.equal(request.aborted, true);
      const result = await reading;
      assert.equal(result.events.at(-1).data.type, 'RUN_ERROR');
      assert.equal(result.events.at(-1).data.code, 'run-aborted');
      assert.equal((await fetch(s.url(), { method: 'POST', headers: { 'x-agui-abort': 'r1', authorization: 'Bearer a' } })).status, 404);
    } finally {
      await s.close();
    }
  });

  test('a client gone before its stream started: the run is abandoned after the grace period', T, async () => {
    const s = await stack({ upstream: unfinished(), proxy: { graceMs: 100 } });
    try {
      const req = httpRequest({ host: '127.0.0.1', port: s.port, method: 'POST', path: '/agent', headers: { 'content-type': 'application/json' } });
      req.on('error', () => {});
      req.end(JSON.stringify(runInput('t1', 'r1')));
      // Gone once the proxy took the run, before any event reached it: not by
      // a timer, which on a loaded machine can fire before the body was read.
      await until(() => s.proxy.stats().runsStarted === 1, 'the proxy to take the run');
      req.destroy();
      await until(() => s.upstream.requests.length === 1, 'the upstream run');
      await s.upstream.requests[0].closed;
      assert.equal(s.upstream.requests[0].aborted, true);
      await until(() => s.proxy.stats().aborts.abandoned === 1, 'the abandon count');
    } finally {
      await s.close();
    }
  });

  test('no reconnect within the grace period: the upstream run is aborted', T, async () => {
    const s = await stack({ upstream: unfinished(), proxy: { graceMs: 150 } });
    try {
      const input = runInput('t1', 'r1');
      const first = await readStream(s.url(), { input, stop: (events) => events.length >= 5 });
      const [request] = s.upstream.requests;
      const started = Date.now();
      await request.closed;
      assert.equal(request.aborted, true);
      assert.ok(Date.now() - started >= 100, 'not before the grace period');
      assert.equal(s.proxy.stats().aborts.abandoned, 1);
      // Still resumable for a while: the tail ends with the RUN_ERROR.
      const rest = await readStream(s.url(), { input, headers: { 'last-event-id': first.events.at(-1).id } });
      assert.equal(rest.events.at(-1).data.type, 'RUN_ERROR');
      assert.equal(rest.events.at(-1).data.code, 'run-aborted');
    } finally {
      await s.close();
    }
  });
});
