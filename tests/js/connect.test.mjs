// connectStateSync against a real local Node http server (StateEmitter +
// agui-state-sync/server) that misbehaves: drops the connection mid-event,
// loses an event, sends a corrupt delta, fails with 503 / 400.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { jsDir, pkg } from './support.mjs';
import { until } from '../support/until.mjs';

const { writeCatchUp } = await import(join(jsDir, 'src', 'server.js'));
const { connectStateSync, createStateEmitter, createStateSync } = pkg;

const FAST = { initialMs: 5, maxMs: 20, jitter: 0 };
const RUN_FINISHED = { type: 'RUN_FINISHED', threadId: 't', runId: 'r' };

let httpServer;
let base;
let handlers = []; // one per expected request, in order
const requests = []; // { headers, body } of every request
const handlerErrors = []; // assertion failures inside handlers
const T = { timeout: 20000 };

before(async () => {
  httpServer = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    requests.push({ method: req.method, headers: req.headers, body });
    const handler = handlers.shift();
    if (!handler) {
      res.writeHead(400).end('no handler'); // a 4xx ends the client's loop
      return;
    }
    try {
      handler(req, res, body);
    } catch (error) {
      handlerErrors.push(error);
      res.destroy();
    }
  });
  await new Promise((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${httpServer.address().port}/stream`;
});

after(() => {
  httpServer.closeAllConnections();
  httpServer.close();
});

afterEach(() => {
  const errors = handlerErrors.splice(0);
  if (errors.length) throw errors[0];
  assert.deepEqual(handlers, [], 'every scripted request was made');
  handlers = [];
  requests.length = 0;
});

function sseHead(res) {
  res.setHeader('content-type', 'text/event-stream');
  res.setHeader('cache-control', 'no-store');
}

async function scenario(options = {}) {
  const emitter = await createStateEmitter({ epoch: 'E', snapshotRatio: 100, initialState: { items: [] } });
  const sync = await createStateSync(options.sync);
  const statuses = [];
  const outcomes = [];
  const add = (n) => {
    const events = [];
    for (let i = 0; i < n; i++) events.push(...emitter.update({ items: [...emitter.state.items, { id: emitter.seq + 1 }] }));
    return events;
  };
  return { emitter, sync, statuses, outcomes, add, listen: { onStatus: (s) => statuses.push(s), onOutcome: (o) => outcomes.push(o) } };
}

describe('connectStateSync', () => {
  test('a connection dropped mid-event heals by replay, without a snapshot', T, async () => {
    const { emitter, sync, statuses, add, listen } = await scenario();
    handlers.push((req, res) => {
      sseHead(res);
      assert.equal(writeCatchUp(res, emitter, req).mode, 'snapshot');
      const events = add(5);
      res.write(events.map((e) => emitter.encode(e)).join(''));
      const more = add(5);
      const text = more.slice(0, 2).map((e) => emitter.encode(e)).join('') + emitter.encode(more[2]).slice(0, 25);
      // Cut inside event 8, once the client has taken event 7 (a cut any sooner could lose bytes still in flight).
      res.write(text, () => until(() => sync.lastSeq === 7, 'the client to take event 7').then(() => res.socket.destroy()));
    });
    handlers.push((req, res) => {
      sseHead(res);
      assert.equal(writeCatchUp(res, emitter, req).mode, 'replay');
      res.end(emitter.encode(RUN_FINISHED));
    });
    const connection = connectStateSync(sync, { url: base, backoff: FAST, ...listen });
    await connection.done;

    assert.deepEqual(sync.state, emitter.state);
    assert.equal(sync.lastSeq, 10);
    assert.equal(sync.status, 'synced');
    const metrics = sync.metrics();
    assert.equal(metrics.snapshots, 1, 'only the first connection got a snapshot');
    assert.equal(metrics.resyncSnapshots, 0);
    assert.equal(requests.length, 2);
    assert.equal(requests[0].headers['x-agui-state-seq'], undefined);
    assert.equal(requests[0].headers.accept, 'text/event-stream');
    assert.equal(requests[1].headers['x-agui-state-seq'], '7');
    assert.equal(requests[1].headers['x-agui-state-epoch'], 'E');
    assert.equal(requests[1].headers['last-event-id'], '7');
    assert.equal(requests[1].headers['x-agui-resync-reason'], undefined, 'behind, not wrong');
    assert.deepEqual(statuses.map((s) => s.state), ['connecting', 'open', 'waiting', 'connecting', 'open', 'closed']);
    assert.deepEqual(statuses.filter((s) => s.state === 'open').map((s) => s.catchUp), ['snapshot', 'replay']);
    assert.ok(statuses[2].error instanceof Error, 'the broken read is reported');
    assert.equal(statuses[2].delayMs, 5);
    sync.dispose();
    emitter.dispose();
  });

  test('idleTimeoutMs: a stream that stops delivering is treated as broken and reconnects', T, async () => {
    const { emitter, sync, statuses, add, listen } = await scenario();
    let stalled;
    handlers.push((req, res) => {
      sseHead(res);
      writeCatchUp(res, emitter, req);
      res.write(add(3).map((e) => emitter.encode(e)).join(''));
      stalled = res; // never writes again, never ends: a dead path
    });
    handlers.push((req, res) => {
      sseHead(res);
      assert.equal(writeCatchUp(res, emitter, req).mode, 'current'); // nothing was lost, only the path died
      res.end(add(1).map((e) => emitter.encode(e)).join('') + emitter.encode(RUN_FINISHED));
    });
    let chunkBytes = 0;
    const onChunk = (chunk) => {
      assert.ok(chunk instanceof Uint8Array);
      chunkBytes += chunk.length;
    };
    let guardWhileIdle = null;
    const onStatus = (s) => {
      listen.onStatus(s);
      if (s.state === 'waiting') guardWhileIdle = sync.guard.blocker();
    };
    await connectStateSync(sync, { url: base, backoff: FAST, ...listen, onStatus, onChunk, idleTimeoutMs: 150 }).done;
    stalled.destroy();
    assert.deepEqual(sync.state, emitter.state);
    assert.equal(sync.lastSeq, 4);
    const waiting = statuses.find((s) => s.state === 'waiting');
    assert.match(waiting.error.message, /idle for 150 ms/);
    assert.equal(guardWhileIdle, 'disconnected', 'the guard refuses while the idle stream is being replaced');
    assert.ok(chunkBytes > 0);
    assert.throws(() => connectStateSync(sync, { url: base, idleTimeoutMs: 0 }), TypeError);
    assert.throws(() => connectStateSync(sync, { url: base, onChunk: 1 }), TypeError);
    sync.dispose();
    emitter.dispose();
  });

  test('a lost event (gap at the end of a stream) resyncs with reason gap and heals by replay', T, async () => {
    const { emitter, sync, outcomes, add, listen } = await scenario();
    handlers.push((req, res) => {
      sseHead(res);
      writeCatchUp(res, emitter, req);
      const events = add(5);
      res.end(events.filter((_, i) => i !== 2).map((e) => emitter.encode(e)).join('')); // seq 3 lost
    });
    handlers.push((req, res) => {
      sseHead(res);
      assert.equal(writeCatchUp(res, emitter, req).mode, 'replay');
      res.end(add(1).map((e) => emitter.encode(e)).join('') + emitter.encode(RUN_FINISHED));
    });
    await connectStateSync(sync, { url: base, backoff: FAST, ...listen }).done;
    assert.deepEqual(outcomes.filter((o) => o.kind === 'resync').map((o) => o.reason), ['gap']);
    assert.equal(requests[1].headers['x-agui-resync-reason'], 'gap');
    assert.equal(requests[1].headers['x-agui-state-seq'], '2');
    assert.deepEqual(sync.state, emitter.state);
    assert.equal(sync.status, 'synced');
    assert.equal(sync.metrics().resyncSnapshots, 0);
    sync.dispose();
    emitter.dispose();
  });

  test('held seqs travel in X-AGUI-State-Held; the replay skips them and the state converges', T, async () => {
    const { emitter, sync, outcomes, add, listen } = await scenario();
    let skipped;
    handlers.push((req, res) => {
      sseHead(res);
      writeCatchUp(res, emitter, req);
      const events = add(6);
      // seqs 3 and 5 lost: 4 and 6 are held for reordering when the stream ends.
      res.end(events.filter((_, i) => i !== 2 && i !== 4).map((e) => emitter.encode(e)).join(''));
    });
    handlers.push((req, res) => {
      sseHead(res);
      skipped = writeCatchUp(res, emitter, req);
      res.end(emitter.encode(RUN_FINISHED));
    });
    await connectStateSync(sync, { url: base, backoff: FAST, ...listen }).done;
    assert.deepEqual(outcomes.filter((o) => o.kind === 'resync').map((o) => o.reason), ['gap']);
    assert.equal(requests[0].headers['x-agui-state-held'], undefined);
    assert.equal(requests[1].headers['x-agui-state-seq'], '2');
    assert.equal(requests[1].headers['x-agui-state-held'], '4,6');
    assert.equal(skipped.mode, 'replay');
    assert.deepEqual(skipped.events.map((e) => e.metadata['agui-state-sync'].seq), [3, 5], 'the held deltas are not sent again');
    assert.deepEqual(sync.state, emitter.state);
    assert.equal(sync.lastSeq, 6);
    assert.equal(sync.status, 'synced');
    assert.equal(sync.resyncRequest(), null);
    const metrics = sync.metrics();
    assert.equal(metrics.duplicates, 0);
    assert.equal(metrics.resyncSnapshots, 0);
    sync.dispose();
    emitter.dispose();
  });

  test('a server that ignores X-AGUI-State-Held replays the held seqs too: duplicates, still converges', T, async () => {
    const { emitter, sync, add, listen } = await scenario();
    handlers.push((req, res) => {
      sseHead(res);
      writeCatchUp(res, emitter, req);
      const events = add(5);
      res.end(events.filter((_, i) => i !== 1).map((e) => emitter.encode(e)).join('')); // seq 2 lost
    });
    handlers.push((req, res) => {
      sseHead(res);
      assert.equal(req.headers['x-agui-state-held'], '3,4,5');
      const { 'x-agui-state-held': _, ...rest } = req.headers;
      const result = writeCatchUp(res, emitter, { headers: rest });
      assert.deepEqual(result.events.map((e) => e.metadata['agui-state-sync'].seq), [2, 3, 4, 5]);
      res.end(emitter.encode(RUN_FINISHED));
    });
    await connectStateSync(sync, { url: base, backoff: FAST, ...listen }).done;
    assert.deepEqual(sync.state, emitter.state);
    assert.equal(sync.status, 'synced');
    assert.equal(sync.metrics().duplicates, 3);
    sync.dispose();
    emitter.dispose();
  });

  test('a corrupt delta (patch-failed) aborts the stream and the server answers with a snapshot', T, async () => {
    const { emitter, sync, outcomes, add, listen } = await scenario();
    let secondSocketClosed = null;
    handlers.push((req, res) => {
      sseHead(res);
      writeCatchUp(res, emitter, req);
      res.write(add(2).map((e) => emitter.encode(e)).join(''));
      const bad = { type: 'STATE_DELTA', delta: [{ op: 'remove', path: '/nope' }], metadata: { seq: 3, baseSeq: 2, epoch: 'E' } };
      res.write(`id: 3\ndata: ${JSON.stringify(bad)}\n\n`);
      add(1); // what seq 3 really was
      // Keep the stream open: the client must abort it by itself.
      secondSocketClosed = new Promise((resolve) => res.on('close', resolve));
    });
    handlers.push((req, res) => {
      sseHead(res);
      assert.equal(writeCatchUp(res, emitter, req).mode, 'snapshot');
      res.end(emitter.encode(RUN_FINISHED));
    });
    await connectStateSync(sync, { url: base, backoff: FAST, ...listen }).done;
    await secondSocketClosed;
    assert.deepEqual(outcomes.filter((o) => o.kind === 'resync').map((o) => o.reason), ['patch-failed']);
    assert.equal(requests[1].headers['x-agui-resync-reason'], 'patch-failed');
    assert.deepEqual(sync.state, emitter.state);
    assert.equal(sync.status, 'synced');
    assert.equal(sync.metrics().resyncSnapshots, 1);
    sync.dispose();
    emitter.dispose();
  });

  test('body(): each attempt POSTs a RunAgentInput with forwardedProps.stateSync', T, async () => {
    const { emitter, sync, add } = await scenario();
    handlers.push((req, res, body) => {
      sseHead(res);
      writeCatchUp(res, emitter, JSON.parse(body));
      const sent = add(3);
      const taken = () => sync.lastSeq === sent.at(-1).metadata['agui-state-sync'].seq;
      res.write(sent.map((e) => emitter.encode(e)).join(''), () => until(taken, 'the client to take the events').then(() => res.socket.destroy()));
      add(1); // made while the client is away
    });
    handlers.push((req, res, body) => {
      sseHead(res);
      assert.equal(writeCatchUp(res, emitter, JSON.parse(body)).mode, 'replay');
      res.end(emitter.encode(RUN_FINISHED));
    });
    const contexts = [];
    const connection = connectStateSync(sync, {
      url: base,
      backoff: FAST,
      init: { headers: { authorization: 'Bearer x' } },
      body: (context) => {
        contexts.push(context);
        // The app's own stateSync fields (edits) are kept; the position is the loop's.
        const stateSync = { edits: [{ editId: 'c:1', baseSeq: 0, ops: [] }], lastSeq: 'not mine' };
        return { threadId: 't', runId: `r${context.attempt}`, messages: [], forwardedProps: { app: 1, stateSync } };
      },
    });
    await connection.done;
    assert.deepEqual(sync.state, emitter.state);
    assert.equal(requests.length, 2);
    for (const [i, request] of requests.entries()) {
      assert.equal(request.method, 'POST');
      assert.equal(request.headers['content-type'], 'application/json');
      assert.equal(request.headers.authorization, 'Bearer x');
      const input = JSON.parse(request.body);
      assert.ok(RunAgentInputSchema.safeParse(input).success, request.body);
      assert.equal(input.runId, `r${i + 1}`);
      assert.equal(input.forwardedProps.app, 1);
      assert.deepEqual(input.forwardedProps.stateSync, {
        edits: [{ editId: 'c:1', baseSeq: 0, ops: [] }],
        lastSeq: contexts[i].lastSeq, epoch: contexts[i].epoch, reason: null, held: contexts[i].held,
      });
      assert.deepEqual(contexts[i].held, []);
    }
    assert.deepEqual(JSON.parse(requests[0].body).forwardedProps.stateSync,
      { edits: [{ editId: 'c:1', baseSeq: 0, ops: [] }], lastSeq: null, epoch: null, reason: null, held: [] });
    assert.equal(contexts[1].epoch, 'E');
    sync.dispose();
    emitter.dispose();
  });

  test('the browser\'s effective connection type rides in forwardedProps.stateSync.connection, when it is a known one', T, async () => {
    for (const [effectiveType, sent] of [['3g', '3g'], ['slow-2g', 'slow-2g'], ['warp-9', undefined], [undefined, undefined]]) {
      const saved = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
      Object.defineProperty(globalThis, 'navigator', { value: { connection: effectiveType ? { effectiveType } : undefined }, configurable: true });
      try {
        const { emitter, sync } = await scenario();
        handlers.push((req, res, body) => {
          sseHead(res);
          writeCatchUp(res, emitter, JSON.parse(body));
          res.end(emitter.encode(RUN_FINISHED));
        });
        requests.length = 0;
        await connectStateSync(sync, { url: base, backoff: FAST, body: () => ({ threadId: 't', runId: 'r', messages: [] }) }).done;
        assert.equal(JSON.parse(requests[0].body).forwardedProps.stateSync.connection, sent, String(effectiveType));
        sync.dispose();
        emitter.dispose();
      } finally {
        if (saved) Object.defineProperty(globalThis, 'navigator', saved);
        else delete globalThis.navigator;
      }
    }
  });

  test('HTTP 503 is retried with backoff; a 4xx ends the loop with an Error', T, async () => {
    const { emitter, sync, statuses, listen } = await scenario();
    handlers.push((req, res) => res.writeHead(503).end());
    handlers.push((req, res) => res.writeHead(503).end());
    handlers.push((req, res) => {
      sseHead(res);
      writeCatchUp(res, emitter, req);
      res.end(emitter.encode(RUN_FINISHED));
    });
    await connectStateSync(sync, { url: base, backoff: { initialMs: 5, factor: 3, maxMs: 100, jitter: 0 }, ...listen }).done;
    assert.deepEqual(statuses.filter((s) => s.state === 'waiting').map((s) => s.delayMs), [5, 15]);
    assert.equal(sync.lastSeq, 0);

    handlers.push((req, res) => res.writeHead(400).end());
    await assert.rejects(connectStateSync(sync, { url: base, backoff: FAST }).done, /HTTP 400/);
    sync.dispose();
    emitter.dispose();
  });

  test('close() and an aborted signal stop the loop (also while waiting); a disposed StateSync ends it quietly', T, async () => {
    const { emitter, sync } = await scenario();
    let opened;
    const open = new Promise((resolve) => { opened = resolve; });
    handlers.push((req, res) => {
      sseHead(res);
      writeCatchUp(res, emitter, req);
      opened();
    });
    const connection = connectStateSync(sync, { url: base, backoff: FAST });
    await open;
    await until(() => sync.lastSeq === 0, 'the catch-up snapshot'); // closed while streaming, with the stream read
    connection.close();
    await connection.done;
    assert.equal(sync.lastSeq, 0);

    handlers.push((req, res) => res.writeHead(503).end());
    const controller = new AbortController();
    const waiting = connectStateSync(sync, {
      url: base,
      backoff: { initialMs: 60000 },
      signal: controller.signal,
      onStatus: (s) => { if (s.state === 'waiting') controller.abort(); },
    });
    const t0 = Date.now();
    await waiting.done;
    assert.ok(Date.now() - t0 < 5000, 'did not sit out the backoff');

    const pre = new AbortController();
    pre.abort();
    await connectStateSync(sync, { url: base, signal: pre.signal }).done;

    handlers.push((req, res) => {
      sseHead(res);
      writeCatchUp(res, emitter, req);
      sync.dispose();
      res.write(emitter.encode(RUN_FINISHED));
    });
    await connectStateSync(sync, { url: base, backoff: FAST }).done;
    emitter.dispose();
  });

  test('argument checks', T, async () => {
    const sync = await createStateSync();
    assert.throws(() => connectStateSync(null, { url: base }), TypeError);
    assert.throws(() => connectStateSync(sync, {}), TypeError);
    assert.throws(() => connectStateSync(sync, { url: base, fetch: 5 }), TypeError);
    assert.throws(() => connectStateSync(sync, { url: base, backoff: { jitter: 2 } }), TypeError);
    assert.throws(() => connectStateSync(sync, { url: base, body: {} }), TypeError);
    sync.dispose();
  });
});
