// agui-state-sync/server: catchUp modes, writeCatchUp on a real Node http
// server, startHeartbeat.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { jsDir, pkg } from './support.mjs';
import { until } from '../support/until.mjs';

const server = await import(join(jsDir, 'src', 'server.js'));
const { catchUp, formatHeld, HEADER_HELD, MAX_HELD, parseHeld, readResyncRequest, SNAPSHOT_REASONS, startHeartbeat, writeCatchUp } = server;
const { createStateEmitter } = pkg;

let emitter;
let sent; // the events of seq 1..6, as first sent

before(async () => {
  emitter = await createStateEmitter({ epoch: 'E', replayMaxEvents: 4, snapshotRatio: 100, initialState: { list: [] } });
  sent = [];
  for (let i = 0; i < 6; i++) sent.push(...emitter.update({ list: [...emitter.state.list, `item ${i}`] }));
  assert.equal(emitter.seq, 6);
});

after(() => emitter.dispose());

const headers = (h) => ({ headers: h });

describe('catchUp', () => {
  test('current: same epoch and seq', () => {
    assert.deepEqual(catchUp(emitter, headers({ 'x-agui-state-seq': '6', 'x-agui-state-epoch': 'E' })), { mode: 'current', events: [] });
  });

  test('replay: the missed deltas exactly as first sent', () => {
    const result = catchUp(emitter, headers({ 'x-agui-state-seq': '3', 'x-agui-state-epoch': 'E' }));
    assert.equal(result.mode, 'replay');
    assert.deepEqual(result.events, sent.slice(3));
  });

  test('snapshot: no seq, unknown or missing epoch, too old, future seq, malformed seq', () => {
    const before = emitter.stats().replaySnapshots;
    for (const h of [
      {},
      { 'x-agui-state-epoch': 'E' },
      { 'x-agui-state-seq': '3' },
      { 'x-agui-state-seq': '3', 'x-agui-state-epoch': 'other' },
      { 'x-agui-state-seq': '1', 'x-agui-state-epoch': 'E' },
      { 'x-agui-state-seq': '7', 'x-agui-state-epoch': 'E' },
      { 'x-agui-state-seq': 'abc', 'x-agui-state-epoch': 'E' },
      { 'x-agui-state-seq': '-1', 'x-agui-state-epoch': 'E' },
      { 'x-agui-state-seq': '03', 'x-agui-state-epoch': 'E' },
    ]) {
      const result = catchUp(emitter, headers(h));
      assert.equal(result.mode, 'snapshot', JSON.stringify(h));
      assert.deepEqual(result.events, [emitter.snapshot()]);
    }
    assert.equal(catchUp(emitter, undefined).mode, 'snapshot');
    assert.equal(catchUp(emitter, null).mode, 'snapshot');
    // Each catch-up answered with a snapshot is counted, whichever rule chose it.
    assert.equal(emitter.stats().replaySnapshots, before + 11);
  });

  test('a reason saying the state is wrong forces a snapshot; gap does not', () => {
    assert.deepEqual([...SNAPSHOT_REASONS].sort(),
      ['anchor-mismatch', 'digest-mismatch', 'limit-exceeded', 'malformed', 'patch-failed', 'precondition-failed',
        'seq-conflict']);
    for (const reason of SNAPSHOT_REASONS) {
      const result = catchUp(emitter, headers({ 'x-agui-state-seq': '6', 'x-agui-state-epoch': 'E', 'x-agui-resync-reason': reason }));
      assert.equal(result.mode, 'snapshot', reason);
    }
    assert.equal(catchUp(emitter, headers({ 'x-agui-state-seq': '4', 'x-agui-state-epoch': 'E', 'x-agui-resync-reason': 'gap' })).mode, 'replay');
  });

  test('header spellings: any case, arrays, WHATWG Headers, fetch Request; Last-Event-ID is not a seq', () => {
    assert.equal(catchUp(emitter, headers({ 'X-AGUI-State-Seq': ['5', '1'], 'X-Agui-State-Epoch': 'E' })).mode, 'replay');
    assert.equal(catchUp(emitter, headers(new Headers({ 'X-AGUI-State-Seq': '6', 'X-AGUI-State-Epoch': 'E' }))).mode, 'current');
    assert.equal(catchUp(emitter, new Request('http://x/', { headers: { 'x-agui-state-seq': '5', 'x-agui-state-epoch': 'E' } })).mode, 'replay');
    assert.equal(catchUp(emitter, headers({ 'last-event-id': '5', 'x-agui-state-epoch': 'E' })).mode, 'snapshot');
    assert.deepEqual(readResyncRequest(headers({ 'last-event-id': 'e9', 'x-agui-resync-reason': 'gap' })),
      { lastSeq: null, epoch: null, reason: 'gap', lastEventId: 'e9', held: [], activities: null });
  });

  test('RunAgentInput: forwardedProps.stateSync', () => {
    const input = (stateSync) => ({ threadId: 't', runId: 'r', messages: [], forwardedProps: { stateSync } });
    assert.equal(catchUp(emitter, input({ lastSeq: 6, epoch: 'E', reason: null })).mode, 'current');
    assert.deepEqual(catchUp(emitter, input({ lastSeq: 4, epoch: 'E' })).events, sent.slice(4));
    assert.equal(catchUp(emitter, input({ lastSeq: 6, epoch: 'E', reason: 'digest-mismatch' })).mode, 'snapshot');
    assert.equal(catchUp(emitter, input({ lastSeq: null, epoch: 'E' })).mode, 'snapshot');
    assert.equal(catchUp(emitter, input({ lastSeq: '6', epoch: 'E' })).mode, 'snapshot', 'lastSeq must be a number here');
    assert.equal(catchUp(emitter, { threadId: 't', runId: 'r', messages: [] }).mode, 'snapshot');
    assert.throws(() => catchUp({}, {}), TypeError);
  });

  test('X-AGUI-State-Held: the replay leaves out the seqs the client holds', () => {
    assert.equal(HEADER_HELD, 'X-AGUI-State-Held');
    const replay = catchUp(emitter, headers({ 'x-agui-state-seq': '2', 'x-agui-state-epoch': 'E', 'x-agui-state-held': '4,6' }));
    assert.equal(replay.mode, 'replay');
    assert.deepEqual(replay.events, [sent[2], sent[4]], 'seqs 3 and 5; 4 and 6 are held');
    // The first missed delta is never left out: a client that held it would have applied it.
    assert.deepEqual(catchUp(emitter, headers({ 'x-agui-state-seq': '2', 'x-agui-state-epoch': 'E', 'x-agui-state-held': '3,4,5,6' })).events, [sent[2]]);
    // Held seqs never turn a snapshot answer into a replay, nor a current client into a replay.
    assert.equal(catchUp(emitter, headers({ 'x-agui-state-seq': '2', 'x-agui-state-epoch': 'other', 'x-agui-state-held': '4' })).mode, 'snapshot');
    assert.equal(catchUp(emitter, headers({ 'x-agui-state-seq': '4', 'x-agui-state-epoch': 'E', 'x-agui-state-held': '6', 'x-agui-resync-reason': 'patch-failed' })).mode, 'snapshot');
    assert.equal(catchUp(emitter, headers({ 'x-agui-state-seq': '6', 'x-agui-state-epoch': 'E', 'x-agui-state-held': '7' })).mode, 'current');
    // RunAgentInput carrier: stateSync.held.
    const input = { threadId: 't', runId: 'r', messages: [], forwardedProps: { stateSync: { lastSeq: 2, epoch: 'E', held: [6, 4] } } };
    assert.deepEqual(catchUp(emitter, input).events, [sent[2], sent[4]]);
  });

  test('X-AGUI-State-Held is validated strictly: bad entries are ignored, nothing throws', () => {
    const held = (value) => readResyncRequest(headers(value === undefined ? {} : { 'X-AGUI-State-Held': value })).held;
    assert.deepEqual(held(undefined), []);
    assert.deepEqual(held(''), []);
    assert.deepEqual(held('12,13,15'), [12, 13, 15]);
    assert.deepEqual(held(' 15 , 12,13 ,12'), [12, 13, 15], 'spaces around entries; sorted, no repeats');
    assert.deepEqual(held('12,abc,-3,1.5,013,0x10,1e3,,+4,9007199254740992,9007199254740991'), [12, 9007199254740991]);
    assert.deepEqual(held(['7,8', '1']), [7, 8], 'repeated header: the first value');
    assert.deepEqual(held(Array.from({ length: 100 }, (_, i) => i + 1).join(',')), Array.from({ length: MAX_HELD }, (_, i) => i + 1),
      'at most MAX_HELD, the lowest');
    assert.deepEqual(held('1,'.repeat(2000) + '2'), [], 'an overlong value is ignored unread');
    assert.deepEqual(readResyncRequest(new Request('http://x/', { headers: { 'x-agui-state-held': '5,3' } })).held, [3, 5]);
    const body = (h) => readResyncRequest({ forwardedProps: { stateSync: { lastSeq: 1, epoch: 'E', held: h } } }).held;
    assert.deepEqual(body([3, '4', -1, 2.5, null, 5, 3]), [3, 5]);
    for (const bad of ['3,4', 3, { 0: 3 }, null, undefined, true]) assert.deepEqual(body(bad), []);
    // A malformed header still gets a valid (unskipped) replay.
    assert.deepEqual(catchUp(emitter, headers({ 'x-agui-state-seq': '3', 'x-agui-state-epoch': 'E', 'x-agui-state-held': 'x,,4;5' })).events, sent.slice(3));
  });

  test('formatHeld / parseHeld round trip', () => {
    assert.equal(formatHeld([15, 12, 13, 13]), '12,13,15');
    assert.deepEqual(parseHeld(formatHeld([15, 12, 13])), [12, 13, 15]);
    assert.equal(formatHeld([]), '');
    assert.equal(formatHeld([-1, 1.5, NaN, '3']), '');
    assert.equal(formatHeld(null), '');
    const many = Array.from({ length: MAX_HELD + 10 }, (_, i) => 9007199254740991 - i);
    const text = formatHeld(many);
    assert.equal(parseHeld(text).length, MAX_HELD);
    assert.deepEqual(parseHeld(text), parseHeld(many));
  });
});

describe('writeCatchUp / startHeartbeat on a real http server', () => {
  let httpServer;
  let base;
  const handlers = [];

  before(async () => {
    httpServer = createServer((req, res) => handlers.shift()(req, res));
    await new Promise((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${httpServer.address().port}`;
  });

  after(() => {
    httpServer.closeAllConnections();
    httpServer.close();
  });

  test('sets X-AGUI-State-Sync before writing the SSE-encoded events', async () => {
    handlers.push((req, res) => {
      res.setHeader('content-type', 'text/event-stream');
      const result = writeCatchUp(res, emitter, req);
      assert.equal(result.mode, 'replay');
      res.end();
    });
    const response = await fetch(base, { headers: { 'X-AGUI-State-Seq': '4', 'X-AGUI-State-Epoch': 'E' } });
    assert.equal(response.headers.get('x-agui-state-sync'), 'replay');
    assert.equal(await response.text(), sent.slice(4).map((e) => emitter.encode(e)).join(''));
  });

  test('headers already sent: the events are still written', async () => {
    handlers.push((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      assert.equal(writeCatchUp(res, emitter, req).mode, 'snapshot');
      res.end();
    });
    const response = await fetch(base);
    assert.equal(response.headers.get('x-agui-state-sync'), null);
    assert.equal(await response.text(), emitter.encode(emitter.snapshot()));
  });

  test('startHeartbeat writes ": hb <seq>" until stopped', async () => {
    let stop;
    handlers.push((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Stopped once two beats are out, not after 80 ms: a slow machine makes the wait longer, never the beats fewer.
      const write = res.write.bind(res);
      let beats = 0;
      res.write = (chunk) => {
        const ok = write(chunk);
        if (++beats === 2) {
          stop();
          stop(); // idempotent
          res.end();
        }
        return ok;
      };
      stop = startHeartbeat(res, emitter, 10);
    });
    const text = await (await fetch(base)).text();
    const beats = text.split('\n\n').filter(Boolean);
    assert.ok(beats.length >= 2, text);
    for (const beat of beats) assert.equal(beat, ': hb 6');
    assert.throws(() => startHeartbeat({ write() {} }, emitter, 0), TypeError);
  });

  test('startHeartbeat can hand its lines to the server\'s own write queue', async () => {
    const queued = [];
    const res = { write() { throw new Error('must not write directly'); } };
    const stop = startHeartbeat(res, emitter, 5, { write: (line) => queued.push(line) });
    await until(() => queued.length >= 2, 'two queued beats');
    stop();
    assert.ok(queued.length >= 2);
    for (const line of queued) assert.equal(line, `: hb ${emitter.seq}\n\n`);
    assert.throws(() => startHeartbeat(res, emitter, 5, { write: 'no' }), TypeError);
  });

  test('startHeartbeat stops by itself when the client goes away', async (t) => {
    // The heartbeat's interval runs on a mocked clock: its beats come only from tick(), which runs them at once,
    // so "no writes after close" is checked by ticking on, not by waiting to see none.
    t.mock.timers.enable({ apis: ['setInterval'] });
    let writes = 0;
    let started = false;
    let closed;
    const gone = new Promise((resolve) => { closed = resolve; });
    handlers.push((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const write = res.write.bind(res);
      res.write = (chunk) => {
        writes++;
        return write(chunk);
      };
      startHeartbeat(res, emitter, 5);
      started = true;
      res.on('close', closed);
    });
    const controller = new AbortController();
    const responding = fetch(base, { signal: controller.signal });
    await until(() => started, 'the heartbeat to start');
    t.mock.timers.tick(5); // the first beat (it also sends the head)
    const reader = (await responding).body.getReader();
    await reader.read();
    controller.abort();
    await gone;
    const after = writes;
    t.mock.timers.tick(50);
    assert.equal(writes, after, 'no writes after close');
  });
});
