// The proxy's flakySegments option (issue 26, item 4; the tax study's policy 5,
// decided in the core: src/emit/segment_tax.h). A window of 4 updates and an
// explicit break-even of 0.2: a '2g' client that keeps coming back behind (its
// stream cut mid-run, resumed once the run is over) puts the '2g' segment on a
// snapshot per update at a window's end, and back on deltas once a window
// passes with nothing missed; a '4g' client that never misses keeps getting
// deltas. Every client ends synced on the upstream's state, and the metrics
// say what happened. Real sockets; each run is over before the next step, so
// the windows fall where the test says (no timing).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, describe, test } from 'node:test';
import {
  createStateSync, metric, parseSse, proxyModule, readStream, runInput, runProxyCli, scrapeCli, serve, startProxyCli, until,
} from './proxy-support.mjs';
import { plain } from './support.mjs';
import { storeKinds } from './store-support.mjs';

const { createOpsHandler, createStateSyncProxy } = proxyModule;

const DOC = 'd'.repeat(2000); // the snapshot is far bigger than a delta: deltas pay off where nothing is missed
const isState = (e) => e.data.type === 'STATE_SNAPSHOT' || e.data.type === 'STATE_DELTA';

/**
 * An AG-UI upstream keeping one state per thread. A run "<name>-<k>" sends its
 * state as a snapshot, then k deltas (each bumps /n and appends a line), then
 * RUN_FINISHED. states(threadId): the upstream's state now.
 */
async function upstreamAgent() {
  const states = new Map();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const { threadId, runId } = JSON.parse(body);
      const state = states.get(threadId) ?? { doc: DOC, n: 0, lines: [] };
      states.set(threadId, state);
      const send = (e) => res.write(`data: ${JSON.stringify(e)}\n\n`);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      send({ type: 'RUN_STARTED', threadId, runId });
      send({ type: 'STATE_SNAPSHOT', snapshot: structuredClone(state) });
      for (let k = Number(runId.split('-').at(-1)); k > 0; k--) {
        state.n++;
        const line = `line ${state.n}`;
        state.lines.push(line);
        send({ type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/n', value: state.n }, { op: 'add', path: '/lines/-', value: line }] });
      }
      send({ type: 'RUN_FINISHED', threadId, runId });
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/agent`,
    state: (threadId) => structuredClone(states.get(threadId)),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/**
 * What a client cut after `cutAfter` state events holds: one read may bring
 * more than that, and what came after the cut is dropped as the link would.
 */
function cutShort(read, cutAfter) {
  if (cutAfter === undefined) return read;
  const blocks = read.text.split('\n\n').filter((b) => b !== '');
  let states = 0;
  const kept = [];
  for (const block of blocks) {
    if (states === cutAfter) break;
    kept.push(block);
    if (/"type":"STATE_(SNAPSHOT|DELTA)"/.test(block)) states++;
  }
  const text = kept.map((b) => `${b}\n\n`).join('');
  return { ...read, text, events: parseSse(text).filter((e) => e.data !== undefined) };
}

/**
 * One client of `connection` on `threadId`: a StateSync fed every stream it
 * reads. run(runId, cutAfter): starts a run with its position; with cutAfter,
 * its stream is cut after that many state events and resumed (Last-Event-ID and
 * its position) once the run is over upstream, so it comes back behind.
 * Returns the state events it received for that run.
 */
async function client(url, proxy, threadId, connection) {
  const sync = await createStateSync();
  const feed = (text) => {
    sync.reset();
    sync.feed(text);
  };
  const run = async (runId, cutAfter) => {
    const position = sync.lastSeq === null ? {} : { lastSeq: sync.lastSeq, epoch: sync.epoch };
    const input = runInput(threadId, runId, { forwardedProps: { stateSync: { connection, ...position } } });
    const stop = (events) => cutAfter !== undefined && events.filter(isState).length >= cutAfter;
    const first = cutShort(await readStream(url, { input, stop }), cutAfter);
    feed(first.text);
    const received = first.events.filter(isState);
    if (cutAfter === undefined) return received;
    await until(() => proxy.stats().liveRuns === 0, 'the cut run to end upstream');
    const resumed = await readStream(url, {
      method: 'GET',
      headers: { 'last-event-id': first.events.at(-1).id, 'x-agui-state-seq': String(sync.lastSeq), 'x-agui-state-epoch': sync.epoch },
    });
    assert.equal(resumed.status, 200);
    feed(resumed.text);
    return [...received, ...resumed.events.filter(isState)];
  };
  return { sync, run };
}

const types = (events) => events.map((e) => e.data.type);
const all = (n, type) => Array.from({ length: n }, () => type);

/**
 * The schedule, through a proxy on `store` (undefined: none): a 2g client cut
 * mid-run and resumed after each of its first runs, a 4g client that never is.
 */
async function flakySchedule(closers, store) {
  const upstream = await upstreamAgent();
  closers.push(upstream.close);
  const errors = [];
  const proxy = createStateSyncProxy({ upstream: upstream.url, store, flakySegments: { window: 4, breakEven: 0.2 }, onError: (e) => errors.push(e) });
  closers.push(async () => proxy.close());
  const agent = await serve(proxy);
  closers.push(agent.close);
  const ops = await serve(await createOpsHandler(proxy));
  closers.push(ops.close);
  const scrape = async () => (await fetch(ops.url('/metrics'))).text();

  const slow = await client(agent.url(), proxy, 'T2', '2g');
  const fast = await client(agent.url(), proxy, 'T4', '4g');
  // Window 1 of 2g: the first snapshot and 3 deltas, nothing missed yet (the cut lands after the window).
  assert.deepEqual(types(await slow.run('r1-3', 2)), ['STATE_SNAPSHOT', ...all(3, 'STATE_DELTA')]);
  assert.deepEqual(types(await fast.run('f1-3')), ['STATE_SNAPSHOT', ...all(3, 'STATE_DELTA')]);
  // Window 2: 4 deltas and the catch-up of r1 (1 in 4 > 0.2): snapshots from its end on.
  assert.deepEqual(types(await slow.run('r2-4', 2)), all(4, 'STATE_DELTA'));
  assert.equal(proxy.stats().flakySegments.snapshotMode['2g'], 1);
  // Windows 3 and 4: snapshot mode, each with a catch-up that missed 2 seqs (2 / 4 >= 0.1): it stays.
  assert.deepEqual(types(await slow.run('r3-4', 2)), all(4, 'STATE_SNAPSHOT'));
  assert.deepEqual(types(await fast.run('f2-4')), all(4, 'STATE_DELTA'));
  assert.deepEqual(types(await slow.run('r4-4')), all(4, 'STATE_SNAPSHOT'));
  let text = await scrape();
  assert.equal(metric(text, 'agui_proxy_segment_snapshot_mode{connection="2g"}'), 1);
  assert.equal(metric(text, 'agui_proxy_segment_snapshot_mode{connection="4g"}'), undefined);
  assert.equal(metric(text, 'agui_proxy_segment_switches_total{connection="2g"}'), 1);
  // Window 5 (r5) misses nothing: still snapshots, then back to deltas at its end (hysteresis); 4g never switched.
  assert.deepEqual(types(await slow.run('r5-4')), all(4, 'STATE_SNAPSHOT'));
  assert.deepEqual(types(await slow.run('r6-4')), all(4, 'STATE_DELTA'));
  assert.deepEqual(types(await fast.run('f3-4')), all(4, 'STATE_DELTA'));
  text = await scrape();
  assert.equal(metric(text, 'agui_proxy_segment_snapshot_mode{connection="2g"}'), 0);
  assert.equal(metric(text, 'agui_proxy_segment_switches_total{connection="2g"}'), 2);
  assert.equal(metric(text, 'agui_proxy_segment_switches_total{connection="4g"}'), undefined);
  assert.deepEqual(proxy.stats().flakySegments, { snapshotMode: { '2g': 0 }, switches: { '2g': 2 } });

  for (const [who, threadId] of [[slow, 'T2'], [fast, 'T4']]) {
    assert.equal(who.sync.status, 'synced', threadId);
    assert.deepEqual(plain(who.sync.state), upstream.state(threadId), threadId);
  }
  assert.deepEqual(errors, []);
}

describe('proxy flakySegments', () => {
  const closers = [];
  after(async () => { for (const c of closers.reverse()) await c(); });

  // Without a store, and on each store (a store-bound emitter's snapshot is awaited; with Redis the run's log is a Stream).
  const kinds = [{ name: 'no store', open: () => undefined, setup: async () => {}, teardown: async () => {} }, ...storeKinds()];
  for (const kind of kinds) {
    test(`a 2g segment that keeps coming back behind gets snapshots per update, 4g keeps deltas; back with hysteresis (${kind.name})`, async () => {
      await kind.setup();
      closers.push(kind.teardown);
      await flakySchedule(closers, kind.open());
    });
  }

  test('the option is checked when the proxy is created', () => {
    for (const flakySegments of [{ window: 0 }, { breakEven: 0 }, { breakEven: 2 }, { other: 1 }, 'yes', null]) {
      assert.throws(() => createStateSyncProxy({ upstream: 'http://127.0.0.1:1/agent', flakySegments }), { code: 'invalid-options' });
    }
    createStateSyncProxy({ upstream: 'http://127.0.0.1:1/agent', flakySegments: true }).close();
  });

  test('the CLI: --flaky-segments with --flaky-window and --flaky-break-even; a bad value exits 2', async () => {
    for (const bad of [['--flaky-window', '4'], ['--flaky-segments', '--flaky-window', '0'], ['--flaky-segments', '--flaky-break-even', '1.5'],
      ['--flaky-segments', '--flaky-break-even', 'x']]) {
      const r = runProxyCli(['--upstream', 'http://127.0.0.1:1/agent', ...bad]);
      assert.equal(r.status, 2, bad.join(' '));
      assert.match(r.stderr, /usage:/);
    }
    const cli = await startProxyCli(['--upstream', 'http://127.0.0.1:1/agent', '--port', '0', '--ops-port', '0',
      '--flaky-segments', '--flaky-window', '4', '--flaky-break-even', '0.2']);
    try {
      const text = await scrapeCli(cli);
      assert.match(text, /# TYPE agui_proxy_segment_snapshot_mode gauge/);
      assert.match(text, /# TYPE agui_proxy_segment_switches_total counter/);
    } finally {
      await cli.stop();
    }
  });
});
