// Operating the proxy (issue 26, section 4): /healthz, /readyz (draining, an
// unreachable store), /metrics checked against what the proxy did, drain()
// refusing new runs while a running one ends, and the CLI's SIGTERM letting a
// live run finish before it exits 0. Real sockets; an upstream the test holds
// open with a gate, so nothing depends on timing.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, describe, test } from 'node:test';
import { memoryStore } from '../../js/src/server.js';
import { metric, proxyModule, readStream, runInput, serve, startProxyCli, until } from './proxy-support.mjs';

const { createOpsHandler, createStateSyncProxy } = proxyModule;

/** An AG-UI upstream whose runs stop after a snapshot until the test opens the gate. */
async function gatedUpstream() {
  let open;
  const gate = new Promise((resolve) => { open = resolve; });
  let started = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', async () => {
      const { threadId, runId } = JSON.parse(body);
      const send = (e) => res.write(`data: ${JSON.stringify(e)}\n\n`);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      send({ type: 'RUN_STARTED', threadId, runId });
      send({ type: 'STATE_SNAPSHOT', snapshot: { step: 1, note: 'x'.repeat(200) } });
      started++;
      await gate;
      send({ type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/step', value: 2 }] });
      send({ type: 'RUN_FINISHED', threadId, runId });
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/agent`,
    open,
    started: () => started,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

const getJson = async (url) => {
  const r = await fetch(url);
  return { status: r.status, body: await r.json() };
};

describe('proxy operations', () => {
  const closers = [];
  after(async () => { for (const c of closers.reverse()) await c(); });

  test('healthz, readyz and metrics that match what the proxy did; drain refuses new runs while one ends', async () => {
    const upstream = await gatedUpstream();
    closers.push(upstream.close);
    const store = memoryStore();
    const proxy = createStateSyncProxy({ upstream: upstream.url, store });
    closers.push(async () => proxy.close());
    const agent = await serve(proxy);
    closers.push(agent.close);
    const ops = await serve(await createOpsHandler(proxy, { store }));
    closers.push(ops.close);

    assert.deepEqual(await getJson(ops.url('/healthz')), { status: 200, body: { status: 'ok' } });
    assert.deepEqual(await getJson(ops.url('/readyz')), { status: 200, body: { status: 'ready' } });
    assert.equal((await fetch(ops.url('/nope'))).status, 404);
    assert.equal((await fetch(ops.url('/metrics'), { method: 'POST' })).status, 405);

    const run = readStream(agent.url(), { input: runInput('T', 'r1') });
    await until(() => upstream.started() === 1, 'the upstream run to start');
    const drained = proxy.drain();
    assert.equal(proxy.draining, true);
    const refused = await fetch(agent.url(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(runInput('T', 'r2')) });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.equal((await refused.json()).error.code, 'disposed');
    assert.deepEqual(await getJson(ops.url('/readyz')), { status: 503, body: { status: 'draining' } });
    let settled = false;
    drained.then(() => { settled = true; });
    assert.equal(proxy.stats().liveRuns, 1);
    assert.equal(settled, false, 'a live run holds the drain');

    upstream.open();
    const { events, text } = await run;
    await drained;
    assert.deepEqual(events.map((e) => e.data.type), ['RUN_STARTED', 'STATE_SNAPSHOT', 'STATE_DELTA', 'RUN_FINISHED']);

    const scraped = await (await fetch(ops.url('/metrics'))).text();
    const stats = proxy.stats();
    assert.equal(metric(scraped, 'agui_proxy_runs_started_total'), 1);
    assert.equal(metric(scraped, 'agui_proxy_deltas_sent_total'), stats.deltasSent);
    assert.equal(metric(scraped, 'agui_proxy_snapshots_sent_total'), stats.snapshotsSent);
    assert.equal(stats.deltasSent + stats.snapshotsSent, 2);
    assert.equal(metric(scraped, 'agui_proxy_client_bytes_total'), stats.clientBytes);
    assert.ok(stats.clientBytes >= Buffer.byteLength(text), 'every byte the client read was counted');
    assert.equal(metric(scraped, 'agui_proxy_live_runs'), 0);
    assert.equal(metric(scraped, 'agui_proxy_draining'), 1);
    assert.equal(metric(scraped, 'agui_proxy_resumes_total{mode="exact"}'), 0);
    assert.ok(metric(scraped, 'agui_proxy_store_latency_seconds_count') >= 1, 'readyz probed the store');
  });

  test('runs are counted by the client\'s connection type, and client resyncs by reason and connection type', async () => {
    const upstream = await gatedUpstream();
    closers.push(upstream.close);
    upstream.open();
    const proxy = createStateSyncProxy({ upstream: upstream.url });
    closers.push(async () => proxy.close());
    const agent = await serve(proxy);
    closers.push(agent.close);
    const ops = await serve(await createOpsHandler(proxy));
    closers.push(ops.close);
    // What StateSyncHttpAgent sends (forwardedProps.stateSync.connection), and hostile values, bounded to 'unknown' / 'other'.
    const clients = [['3g', 'gap'], ['3g', null], ['4g', 'digest-mismatch'], ['5g-turbo', 'made-up'], [undefined, 'gap']];
    for (const [i, [connection, reason]] of clients.entries()) {
      const input = runInput(`C${i}`, `r${i}`);
      input.forwardedProps = { stateSync: { lastSeq: null, epoch: null, reason, held: [], ...(connection ? { connection } : {}) } };
      await readStream(agent.url(), { input });
    }
    const scraped = await (await fetch(ops.url('/metrics'))).text();
    const runs = (connection) => metric(scraped, `agui_proxy_runs_by_connection_total{connection="${connection}"}`);
    assert.deepEqual(['3g', '4g', 'unknown'].map(runs), [2, 1, 2]);
    const resyncs = (reason, connection) => metric(scraped, `agui_proxy_resyncs_total{reason="${reason}",connection="${connection}"}`);
    assert.deepEqual([resyncs('gap', '3g'), resyncs('digest-mismatch', '4g'), resyncs('other', 'unknown'), resyncs('gap', 'unknown')], [1, 1, 1, 1]);
    assert.ok(!scraped.includes('5g-turbo') && !scraped.includes('made-up'), 'a client cannot mint labels');
  });

  test('readyz is 503 while the store does not answer', async () => {
    const proxy = createStateSyncProxy({ upstream: 'http://127.0.0.1:9/agent' });
    closers.push(async () => proxy.close());
    const dead = { peek: () => Promise.reject(new Error('ECONNREFUSED')) };
    const ops = await serve(await createOpsHandler(proxy, { store: dead }));
    closers.push(ops.close);
    assert.deepEqual(await getJson(ops.url('/readyz')), { status: 503, body: { status: 'store-unavailable' } });
    const silent = { peek: () => new Promise(() => {}) };
    const slow = await serve(await createOpsHandler(proxy, { store: silent, storeTimeoutMs: 50 }));
    closers.push(slow.close);
    assert.deepEqual(await getJson(slow.url('/readyz')), { status: 503, body: { status: 'store-unavailable' } });
  });

  test('CLI: --ops-port serves the endpoints; SIGTERM lets the live run end, then exits 0', async () => {
    const upstream = await gatedUpstream();
    closers.push(upstream.close);
    const cli = await startProxyCli(['--upstream', upstream.url, '--port', '0', '--ops-port', '0']);
    const opsUrl = await until(() => /operations on (http:\/\/\S+)/.exec(cli.output())?.[1], 'the operations port');
    assert.equal((await getJson(new URL('/healthz', opsUrl))).status, 200);
    const run = readStream(cli.url, { input: runInput('T', 'r1') });
    await until(() => upstream.started() === 1, 'the upstream run to start');
    cli.child.kill('SIGTERM');
    await until(() => cli.output().includes('"event":"draining"'), 'the drain to start');
    assert.deepEqual(await getJson(new URL('/readyz', opsUrl)), { status: 503, body: { status: 'draining' } });
    upstream.open();
    const { events } = await run;
    assert.equal(events.at(-1).data.type, 'RUN_FINISHED', 'the live run ended normally');
    assert.equal(await cli.stop(), 0);
    const stopped = cli.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).find((l) => l.event === 'stopped');
    assert.equal(stopped.after, 'idle');
  });
});
