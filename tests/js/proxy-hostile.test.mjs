// agui-state-sync/proxy against hostile and malformed requests, its bounds
// (threads, runs, buffered bytes, idle eviction), what it forwards upstream,
// its option checks, and the agui-state-sync-proxy CLI.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildScript } from '../support/upstreams.mjs';
import { jsDir, pkg, plain } from './support.mjs';
import { connectClient, createStateSyncProxy, readStream, runInput, stack, until } from './proxy-support.mjs';

const { AguiSyncError } = pkg;
const T = { timeout: 20000 };
const BIN = join(jsDir, 'bin', 'agui-state-sync-proxy.js');

/** One raw HTTP request: { status, headers, body }. `body`: a string, or a function(req) that writes it. */
function raw(port, { method = 'POST', path = '/agent', headers = {}, body }) {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    if (typeof body === 'function') body(req);
    else req.end(body);
  });
}

const json = (value) => JSON.stringify(value);
const jsonHeaders = { 'content-type': 'application/json' };

describe('proxy: hostile requests get a clear 4xx, or are ignored safely', () => {
  let s;
  before(async () => {
    s = await stack({
      upstream: { shape: 'docs', script: buildScript({ seed: 2, steps: 3 }), stepMs: 1 },
      proxy: { maxBodyBytes: 4096, bodyTimeoutMs: 200 },
    });
  });
  after(() => s.close());

  const cases = [
    ['a method other than GET and POST', { method: 'PUT', body: '{}' }, 405, 'invalid-request'],
    ['a body that is not JSON', { headers: jsonHeaders, body: '{"threadId": ' }, 400, 'invalid-json'],
    ['a JSON array', { headers: jsonHeaders, body: '[1,2]' }, 400, 'invalid-request'],
    ['JSON null', { headers: jsonHeaders, body: 'null' }, 400, 'invalid-request'],
    ['no threadId', { headers: jsonHeaders, body: json({ runId: 'r' }) }, 400, 'invalid-request'],
    ['a numeric runId', { headers: jsonHeaders, body: json({ threadId: 't', runId: 7 }) }, 400, 'invalid-request'],
    ['a 2,000-character threadId', { headers: jsonHeaders, body: json({ threadId: 'x'.repeat(2000), runId: 'r' }) }, 400, 'invalid-request'],
    ['a text/plain body', { headers: { 'content-type': 'text/plain' }, body: json(runInput('t', 'r')) }, 415, 'invalid-request'],
    ['a declared body over maxBodyBytes', { headers: { ...jsonHeaders, 'content-length': '99999' }, body: (req) => req.end() }, 413, 'limit-exceeded'],
    ['a chunked body over maxBodyBytes', { headers: jsonHeaders, body: (req) => {
      for (let i = 0; i < 10; i++) req.write('x'.repeat(1000));
      req.end();
    } }, 413, 'limit-exceeded'],
    ['a body that never ends', { headers: { ...jsonHeaders, 'content-length': '100' }, body: (req) => req.write('{"a":') }, 408, 'invalid-request'],
    ['a GET without Last-Event-ID', { method: 'GET' }, 400, 'invalid-request'],
    ['a GET with a Last-Event-ID that is not ours', { method: 'GET', headers: { 'last-event-id': '42' } }, 400, 'invalid-request'],
    ['a GET with one of ours whose run is unknown', { method: 'GET', headers: { 'last-event-id': `${'A'.repeat(22)}:3` } }, 410, 'invalid-request'],
    ['an empty X-AGUI-Abort', { headers: { 'x-agui-abort': '' } }, 400, 'invalid-request'],
    ['X-AGUI-Abort on a GET', { method: 'GET', headers: { 'x-agui-abort': 'r' } }, 405, 'invalid-request'],
    ['an abort of an unknown run', { headers: { 'x-agui-abort': 'nobody' } }, 404, null],
  ];
  for (const [name, options, status, code] of cases) {
    test(name, T, async () => {
      const response = await raw(s.port, options);
      assert.equal(response.status, status, response.body);
      const body = JSON.parse(response.body);
      if (code) assert.equal(body.error.code, code);
      if (status === 405) assert.equal(response.headers.allow, 'GET, POST');
    });
  }

  test('a header block over Node\'s limit is refused by the server (431)', T, async () => {
    const response = await raw(s.port, { headers: { 'x-big': 'y'.repeat(20000) }, body: '{}' });
    assert.equal(response.status, 431);
  });

  test('bad X-AGUI-State-* values and a foreign Last-Event-ID are ignored: the run is served', T, async () => {
    const warm = await connectClient(s.url(), runInput('tb', 'r0'));
    await warm.done; // the thread now has a vouched state
    for (const headers of [
      { 'x-agui-state-seq': 'abc', 'x-agui-state-epoch': 'E', 'x-agui-state-held': '1,x,,99999999999999999999' },
      { 'x-agui-state-seq': '-1', 'x-agui-resync-reason': 'no-such-reason' },
      { 'x-agui-state-seq': '9007199254740993', 'x-agui-state-held': '5,'.repeat(2000) },
      { 'last-event-id': 'not:ours:at:all', 'x-agui-state-seq': '03' },
      { 'last-event-id': `${'B'.repeat(22)}:99999999999999999` },
    ]) {
      const result = await readStream(s.url(), { input: runInput('tb', `r-${Math.random()}`), headers });
      assert.equal(result.status, 200);
      const types = result.events.map((e) => e.data.type);
      assert.equal(types[0], 'RUN_STARTED');
      assert.equal(types[1], 'STATE_SNAPSHOT', 'an unplaceable position gets a snapshot');
      assert.equal(types.at(-1), 'RUN_FINISHED');
    }
  });

  // (Malformed stateSync.edits are a 400 instead: proxy-edits.test.mjs.)
  test('forwardedProps.stateSync position fields of the wrong types are ignored; the proxy keeps it to itself', T, async () => {
    const input = runInput('tc', 'r1', { forwardedProps: { keep: 1, stateSync: { lastSeq: 'x', epoch: {}, held: 'nope', other: [1] } } });
    const result = await readStream(s.url(), { input });
    assert.equal(result.events.at(-1).data.type, 'RUN_FINISHED');
    const forwarded = s.upstream.requests.at(-1).input;
    assert.deepEqual(forwarded.forwardedProps, { keep: 1 });
  });

  test('a Last-Event-ID of a live stream naming an event it has not sent is refused (400)', T, async () => {
    const first = await readStream(s.url(), { input: runInput('td', 'r1') });
    const [key] = first.events[0].id.split(':');
    const response = await raw(s.port, { method: 'GET', headers: { 'last-event-id': `${key}:${first.events.length + 5}` } });
    assert.equal(response.status, 400);
  });

  test('after all that, the proxy still serves runs and reported nothing unexpected', T, async () => {
    const client = await connectClient(s.url(), runInput('te', 'r1'));
    await client.done;
    assert.equal(client.sync.status, 'synced');
    assert.deepEqual(plain(client.sync.state), s.upstream.state('te'));
    assert.ok(s.errors.every((e) => e instanceof AguiSyncError), 'onError only ever gets AguiSyncErrors');
  });
});

describe('proxy: what leaves the host', () => {
  test('only allow-listed headers go upstream, and nothing of the proxy\'s own conversation', T, async () => {
    const s = await stack({ upstream: { shape: 'docs', script: buildScript({ steps: 2 }), stepMs: 1 }, proxy: { forwardHeaders: ['authorization', 'x-tenant'] } });
    try {
      await readStream(s.url(), {
        input: runInput('t1', 'r1'),
        headers: { authorization: 'Bearer t', cookie: 'sid=1', 'x-tenant': 'acme', 'x-secret': 's', 'x-agui-state-seq': '3', 'last-event-id': 'x' },
      });
      const { headers } = s.upstream.requests[0];
      assert.equal(headers.authorization, 'Bearer t');
      assert.equal(headers['x-tenant'], 'acme');
      for (const name of ['cookie', 'x-secret', 'x-agui-state-seq', 'last-event-id']) assert.equal(headers[name], undefined, name);
      assert.equal(headers.accept, 'text/event-stream');
    } finally {
      await s.close();
    }
  });
});

describe('proxy: bounded memory', () => {
  const slow = { shape: 'docs', script: buildScript({ seed: 3, steps: 40 }), stepMs: 10 };

  test('maxThreads: a new thread is refused (503) while every thread has a live run, and takes an idle one\'s place later', T, async () => {
    // The runs finish only once released (upstreams.mjs faults.hold): live at the refusal however slow the machine.
    let release;
    const hold = new Promise((resolve) => { release = resolve; });
    const s = await stack({ upstream: { ...slow, faults: { hold } }, proxy: { maxThreads: 2, graceMs: 50 } });
    try {
      const a = readStream(s.url(), { input: runInput('ta', 'r1') });
      const b = readStream(s.url(), { input: runInput('tb', 'r1') });
      await until(() => s.upstream.requests.length === 2, 'two runs');
      const refused = await raw(s.port, { headers: jsonHeaders, body: json(runInput('tc', 'r1')) });
      assert.equal(refused.status, 503);
      assert.equal(JSON.parse(refused.body).error.code, 'limit-exceeded');
      release();
      await Promise.all([a, b]);
      await until(() => s.proxy.stats().runs === 0, 'finished runs to be dropped');
      const c = await readStream(s.url(), { input: runInput('tc', 'r1') });
      assert.equal(c.events.at(-1).data.type, 'RUN_FINISHED');
      assert.equal(s.proxy.stats().threads, 2);
    } finally {
      await s.close();
    }
  });

  test('maxRuns: a run beyond it is refused (503) while all are live', T, async () => {
    let release;
    const hold = new Promise((resolve) => { release = resolve; }); // live at the refusal, as above
    const s = await stack({ upstream: { ...slow, faults: { hold } }, proxy: { maxRuns: 1 } });
    try {
      const a = readStream(s.url(), { input: runInput('ta', 'r1') });
      await until(() => s.upstream.requests.length === 1, 'one run');
      const refused = await raw(s.port, { headers: jsonHeaders, body: json(runInput('tb', 'r1')) });
      assert.equal(refused.status, 503);
      release();
      await a;
    } finally {
      await s.close();
    }
  });

  test('threads without runs are forgotten after threadIdleMs; finished runs after graceMs', T, async () => {
    const s = await stack({ upstream: { ...slow, stepMs: 1, script: buildScript({ steps: 3 }) }, proxy: { threadIdleMs: 100, graceMs: 50 } });
    try {
      await readStream(s.url(), { input: runInput('ta', 'r1') });
      assert.equal(s.proxy.stats().threads, 1);
      await until(() => s.proxy.stats().runs === 0, 'the run to be dropped');
      await until(() => s.proxy.stats().threads === 0, 'the thread to be forgotten');
      assert.equal(s.proxy.stats().bufferedBytes, 0);
    } finally {
      await s.close();
    }
  });

  test('a client that does not read is cut at maxClientQueueBytes; the run goes on (grace)', T, async () => {
    const big = { title: 't', counter: 0, items: Array.from({ length: 1000 }, (_, i) => ({ id: `x${i}`, label: 'y'.repeat(180) })) };
    const s = await stack({
      upstream: { shape: 'snapshots', script: buildScript({ steps: 120, textEvery: 0, toolCall: false }), stepMs: 0, initialState: big },
      proxy: { maxClientQueueBytes: 1 << 20, emitter: { snapshotRatio: 0 } }, // every update a ~200 KB snapshot
    });
    const socket = connect(s.port, '127.0.0.1');
    try {
      const body = json(runInput('t1', 'r1'));
      socket.write(`POST /agent HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      socket.pause(); // and never read
      await until(() => s.proxy.stats().slowClientsCut === 1, 'the slow client to be cut');
      await until(() => s.upstream.requests[0]?.completed, 'the upstream run to complete');
      assert.equal(s.upstream.requests[0].aborted, false);
    } finally {
      socket.destroy();
      await s.close();
    }
  });

  test('maxBufferedBytes bounds the event logs of all runs together', T, async () => {
    const s = await stack({ upstream: { ...slow, stepMs: 1 }, proxy: { maxBufferedBytes: 3000, maxRunBufferBytes: 2000 } });
    try {
      let peak = 0;
      const sample = () => {
        peak = Math.max(peak, s.proxy.stats().bufferedBytes);
      };
      // Sampled each time a client reads (the proxy then holds what it sent: never 0, however slow the machine),
      // and every millisecond in between.
      const reads = ['ta', 'tb', 'tc'].map((t) => readStream(s.url(), { input: runInput(t, 'r1'), onText: sample }));
      const timer = setInterval(sample, 1);
      await Promise.all(reads);
      clearInterval(timer);
      assert.ok(peak > 0 && peak <= 3000 + 1000, `peak ${peak}`);
    } finally {
      await s.close();
    }
  });
});

describe('createStateSyncProxy options', () => {
  for (const [name, options] of [
    ['no options', undefined],
    ['no upstream', {}],
    ['an upstream that is not a URL', { upstream: 'nope' }],
    ['an ftp: upstream', { upstream: 'ftp://127.0.0.1/x' }],
    ['an unknown option', { upstream: 'http://127.0.0.1/', gracems: 5 }],
    ['graceMs 0', { upstream: 'http://127.0.0.1/', graceMs: 0 }],
    ['a fractional limit', { upstream: 'http://127.0.0.1/', maxThreads: 1.5 }],
    ['forwarding Host', { upstream: 'http://127.0.0.1/', forwardHeaders: ['Host'] }],
    ['forwarding an X-AGUI-* header', { upstream: 'http://127.0.0.1/', forwardHeaders: ['x-agui-state-seq'] }],
    ['a header name with a space', { upstream: 'http://127.0.0.1/', forwardHeaders: ['x y'] }],
    ['an emitter initialState', { upstream: 'http://127.0.0.1/', emitter: { initialState: {} } }],
    ['an onError that is not a function', { upstream: 'http://127.0.0.1/', onError: 1 }],
  ]) {
    test(`${name}: AguiSyncError invalid-options (a TypeError)`, () => {
      assert.throws(() => createStateSyncProxy(options), (error) => error instanceof AguiSyncError && error instanceof TypeError && error.code === 'invalid-options');
    });
  }

  test('a valid configuration gives a (req, res) handler with close() and stats()', () => {
    const proxy = createStateSyncProxy({ upstream: new URL('http://127.0.0.1:1/agent'), forwardHeaders: ['Authorization'], emitter: { digestEvery: 8 } });
    assert.equal(typeof proxy, 'function');
    assert.equal(proxy.length, 2);
    assert.equal(proxy.stats().threads, 0);
    proxy.close();
  });
});

describe('agui-state-sync-proxy (CLI)', () => {
  test('--help prints the usage; a missing --upstream or a bad --port exits 2', () => {
    const help = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /--upstream URL/);
    for (const args of [[], ['--upstream', 'http://127.0.0.1:1/', '--port', 'x'], ['--upstream', 'ftp://x/'], ['--bogus']]) {
      const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
      assert.equal(r.status, 2, args.join(' '));
      assert.match(r.stderr, /usage:/);
    }
  });

  test('serves a run through the proxy, then exits 0 on SIGTERM', T, async () => {
    const { startUpstream } = await import('../support/upstreams.mjs');
    const upstream = await startUpstream({ shape: 'snapshots', script: buildScript({ steps: 4 }), stepMs: 1 });
    const child = spawn(process.execPath, [BIN, '--upstream', upstream.url, '--port', '0', '--grace-ms', '1000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk) => {
          out += chunk;
          const match = /listening on (http:\/\/\S+)/.exec(out);
          if (match) resolve(match[1]);
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      const client = await connectClient(new URL('agent', url).href, runInput('t1', 'r1'));
      await client.done;
      assert.equal(client.sync.status, 'synced');
      assert.deepEqual(plain(client.sync.state), upstream.state('t1'));
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      child.kill();
      await upstream.close();
    }
  });
});
