// StateSyncHttpAgent with { activities: true }: agent.messages shows each
// activity's content as the engine verified it (docs/wire.md section 11),
// never @ag-ui/client's own patch of its own copy. The control: HttpAgent on
// the same stream, which loses an activity delta's predecessor and applies the
// next one to the wrong content without a word.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { HttpAgent } from '@ag-ui/client';
import { buildScript } from '../support/upstreams.mjs';
import { runInput, stack } from './proxy-support.mjs';
import { jsDir, pkg, plain } from './support.mjs';

const { StateSyncHttpAgent } = await import(join(jsDir, 'src', 'ag-ui.js'));
const { writeCatchUp } = await import(join(jsDir, 'src', 'server.js'));
process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';

const closers = [];
after(async () => { for (const close of closers.reverse()) await close(); });

const activityContents = (messages) => Object.fromEntries(messages.filter((m) => m.role === 'activity').map((m) => [m.id, plain(m.content)]));

test('behind the proxy: agent.messages holds every activity at the engine\'s verified content', { timeout: 30000 }, async () => {
  const s = await stack({ upstream: { shape: 'docs', script: buildScript({ seed: 11, steps: 12, activities: 2 }), stepMs: 0 } });
  closers.push(s.close);
  const agent = new StateSyncHttpAgent({ url: s.url('/agent'), threadId: 't1', stateSync: { activities: true } });
  closers.push(() => agent.dispose?.());
  await agent.runAgent({ runId: 'r1' });
  const expected = s.upstream.activities('t1');
  assert.equal(Object.keys(expected).length, 2);
  assert.deepEqual(activityContents(agent.messages), expected);
  const engine = Object.fromEntries(Object.entries(agent.stateSync.activities).map(([id, a]) => [id, plain(a.content)]));
  assert.deepEqual(engine, expected);
});

test('a lost activity delta: HttpAgent shows content the agent never held; ours heals by its catch-up and never does', { timeout: 30000 }, async () => {
  const emitter = await pkg.createStateEmitter({ epoch: 'e', snapshotRatio: 100 });
  const cards = emitter.activities;
  const s0 = cards.snapshot('m1', 'checkout', { items: [], total: 0 });
  const d1 = cards.snapshot('m1', 'checkout', { items: ['a'], total: 1 }); // lost on the first connection
  const d2 = cards.snapshot('m1', 'checkout', { items: ['a'], total: 2 });
  const held = [{ items: [], total: 0 }, { items: ['a'], total: 1 }, { items: ['a'], total: 2 }];
  assert.deepEqual([...d1, ...d2].map((e) => e.type), ['ACTIVITY_DELTA', 'ACTIVITY_DELTA']);
  let requests = 0;
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const input = JSON.parse(body);
    const started = { type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId };
    const finished = { type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId };
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (requests++ === 0 || input.forwardedProps?.stateSync === undefined) {
      res.end([started, ...s0, ...d2, finished].map((e) => emitter.encode(e)).join(''));
      return;
    }
    res.write(emitter.encode(started));
    writeCatchUp(res, emitter, input); // the activity's missed events
    res.end(emitter.encode(finished));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
  const url = `http://127.0.0.1:${server.address().port}/agent`;

  const control = new HttpAgent({ url, threadId: 't1' });
  await control.runAgent({ runId: 'plain' });
  const drifted = activityContents(control.messages).m1;
  assert.deepEqual(drifted, { items: [], total: 2 }, 'the control: d2 applied to the content d1 never reached');
  assert.ok(!held.some((c) => isDeepStrictEqual(c, drifted)), 'content the agent never held');

  requests = 0;
  const agent = new StateSyncHttpAgent({ url, threadId: 't1', stateSync: { activities: true, backoff: { initialMs: 1, maxMs: 5, jitter: 0 } } });
  closers.push(() => agent.dispose?.());
  const seen = [];
  agent.subscribe({ onMessagesChanged: ({ messages }) => { const c = activityContents(messages).m1; if (c) seen.push(c); } });
  await agent.runAgent({ runId: 'ours' });
  assert.ok(requests >= 2, 'the gap made it ask for the activity\'s catch-up');
  assert.deepEqual(activityContents(agent.messages).m1, held[2]);
  assert.ok(seen.length > 0 && seen.every((c) => held.some((h) => isDeepStrictEqual(h, c))), JSON.stringify(seen));
  emitter.dispose();
});
