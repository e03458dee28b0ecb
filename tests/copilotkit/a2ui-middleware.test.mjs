// The A2UI middleware's stream shape (issue 25, item 1; make copilotkit-test).
// @ag-ui/a2ui-middleware, the package CopilotKit ships, turns an agent's
// render_a2ui tool call into ACTIVITY_SNAPSHOTs of one messageId, each one
// replacing the last: "building", its progress, the surface, then the surface
// with its data. An agent of plain events, wrapped by the real middleware, is
// served as an AG-UI backend (@ag-ui/encoder) behind the sequencing proxy:
//  - the proxy sends the first of them as a snapshot and every later one as a
//    delta of the one before, and the client's stream carries fewer activity
//    bytes than the backend's;
//  - a StateSyncHttpAgent ends with the middleware's last content, verified,
//    in sync.activities and in agent.messages, for every fault seed of a link
//    that cuts and re-chunks the proxy's responses;
//  - @ag-ui/client's own verifyEvents accepts every event the proxy sent.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { A2UIMiddleware } from '@ag-ui/a2ui-middleware';
import { AbstractAgent, EventType, verifyEvents } from '@ag-ui/client';
import { EventEncoder } from '@ag-ui/encoder';
import { StateSyncHttpAgent } from 'agui-state-sync/ag-ui';
import { createStateSyncProxy } from 'agui-state-sync/proxy';
import { from, lastValueFrom, Observable, toArray } from 'rxjs';
import { startFaultLink } from '../support/fault-link.mjs';
import { until } from '../support/until.mjs';

process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';
const T = { timeout: 60000 };
const ACTIVITY = new Set([EventType.ACTIVITY_SNAPSHOT, EventType.ACTIVITY_DELTA]);

// What the agent asks the middleware to paint: a column with a title and a list bound to /items.
const SURFACE = {
  surfaceId: 'trip',
  components: [
    { id: 'root', component: 'Column', children: ['title', 'list'] },
    { id: 'title', component: 'Text', text: 'Your trip' },
    { id: 'list', component: 'List', children: { path: '/items', componentId: 'row' } },
    { id: 'row', component: 'Text', text: { path: 'name' } },
  ],
  data: { items: ['Lisbon', 'Porto', 'Faro', 'Coimbra', 'Évora'].map((name) => ({ name })) },
};

/** An agent that calls render_a2ui once, its arguments streamed in 40-character pieces, as a model streams them. */
class SurfaceAgent extends AbstractAgent {
  run(input) {
    const args = JSON.stringify(SURFACE);
    return new Observable((subscriber) => {
      subscriber.next({ type: EventType.RUN_STARTED, threadId: input.threadId, runId: input.runId });
      subscriber.next({ type: EventType.TOOL_CALL_START, toolCallId: `call-${input.runId}`, toolCallName: 'render_a2ui' });
      for (let i = 0; i < args.length; i += 40) {
        subscriber.next({ type: EventType.TOOL_CALL_ARGS, toolCallId: `call-${input.runId}`, delta: args.slice(i, i + 40) });
      }
      subscriber.next({ type: EventType.TOOL_CALL_END, toolCallId: `call-${input.runId}` });
      subscriber.next({ type: EventType.RUN_FINISHED, threadId: input.threadId, runId: input.runId });
      subscriber.complete();
    });
  }
}

/** The middleware's output for one RunAgentInput: the events a backend serving this agent sends. */
async function middlewareEvents(input) {
  const agent = new SurfaceAgent({ threadId: input.threadId });
  agent.use(new A2UIMiddleware({ injectA2UITool: true }));
  const events = [];
  await agent.runAgent({ runId: input.runId }, { onEvent: ({ event }) => { events.push(event); } });
  return events;
}

/** A backend that answers each run with the middleware's events, encoded by @ag-ui/encoder; it keeps what it sent. */
async function startBackend() {
  const sent = new Map(); // runId -> events
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const input = JSON.parse(body);
    const encoder = new EventEncoder({ accept: req.headers.accept });
    const events = await middlewareEvents(input);
    sent.set(input.runId, events);
    res.writeHead(200, { 'content-type': encoder.getContentType() });
    for (const event of events) res.write(encoder.encode(event));
    res.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/agent`, sent, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }) };
}

/** The proxy on its own port. */
async function startProxy(upstream) {
  const proxy = createStateSyncProxy({ upstream });
  const server = createServer((req, res) => proxy(req, res));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: server.address().port, close: () => new Promise((resolve) => { proxy.close(); server.closeAllConnections(); server.close(resolve); }) };
}

/** Each activity's content after `events`, by messageId: only snapshots that replace (the middleware's shape). */
function lastContents(events) {
  const out = {};
  for (const event of events) if (event.type === EventType.ACTIVITY_SNAPSHOT) out[event.messageId] = event.content;
  return out;
}

/** The `data:` payloads of an SSE text, parsed. */
const sseEvents = (text) => text.split('\n\n').filter((block) => block.includes('data: '))
  .map((block) => JSON.parse(block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')));

describe('the A2UI middleware (@ag-ui/a2ui-middleware) behind the proxy', () => {
  let backend;
  let proxy;
  before(async () => {
    backend = await startBackend();
    proxy = await startProxy(backend.url);
  });
  after(async () => {
    await proxy.close();
    await backend.close();
  });

  test('repeated ACTIVITY_SNAPSHOTs go out as one snapshot, then deltas; verifyEvents accepts the stream', T, async () => {
    const input = { threadId: 'a2ui-wire', runId: 'run-wire', state: {}, messages: [], tools: [], context: [], forwardedProps: {} };
    const response = await fetch(`http://127.0.0.1:${proxy.port}/agent`, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(input),
    });
    const events = sseEvents(await response.text());
    const upstream = backend.sent.get('run-wire');
    const snapshots = upstream.filter((e) => e.type === EventType.ACTIVITY_SNAPSHOT);
    assert.ok(snapshots.length >= 4, `the middleware repeats its snapshot (${snapshots.length})`);
    assert.equal(new Set(snapshots.map((e) => e.messageId)).size, 1, 'of one messageId');

    const activity = events.filter((e) => ACTIVITY.has(e.type));
    assert.equal(activity[0].type, EventType.ACTIVITY_SNAPSHOT, 'the first goes out whole');
    assert.ok(activity.slice(1).some((e) => e.type === EventType.ACTIVITY_DELTA), 'later ones go out as deltas');
    const bytes = (list) => list.reduce((sum, e) => sum + JSON.stringify(e).length, 0);
    assert.ok(bytes(activity) < bytes(snapshots), `fewer activity bytes to the client (${bytes(activity)}) than from the agent (${bytes(snapshots)})`);
    const passed = (list) => list.filter((e) => !ACTIVITY.has(e.type) && !String(e.name).startsWith('agui-state-sync.')).map((e) => e.type);
    assert.deepEqual(passed(events), passed(upstream), 'every other event passes in order');
    const verified = await lastValueFrom(from(events).pipe(verifyEvents(false), toArray()));
    assert.equal(verified.length, events.length, 'verifyEvents accepts every event');
  });

  for (const seed of [1, 2, 3, 4, 5]) {
    test(`seed ${seed}: through a link that cuts and re-chunks, StateSyncHttpAgent ends with the middleware's content, verified`, T, async () => {
      // Every response is cut mid-stream until one was: then the link only re-chunks.
      const link = await startFaultLink({ target: { host: '127.0.0.1', port: proxy.port }, seed, cutProbability: 1, cutAfterBytes: [300, 1500], chunkBytes: [1, 64] });
      const healed = until(() => link.stats.cuts >= 1, 'a cut').then(() => link.setFaults({ cutProbability: 0 }));
      const threadId = `a2ui-${seed}`;
      const agent = new StateSyncHttpAgent({ url: link.url('/agent'), threadId, stateSync: { activities: true, backoff: { initialMs: 5, maxMs: 50 } } });
      try {
        await agent.ready;
        await agent.runAgent({ runId: `run-${seed}` });
        await healed;
        const expected = lastContents(backend.sent.get(`run-${seed}`));
        const [messageId] = Object.keys(expected);
        const held = agent.stateSync.activities[messageId];
        assert.equal(held.status, 'synced', 'verified');
        assert.deepEqual(held.content, expected[messageId], 'the middleware\'s last content');
        const shown = agent.messages.find((m) => m.role === 'activity' && m.id === messageId);
        assert.deepEqual(shown?.content, expected[messageId], 'agent.messages shows it');
      } finally {
        agent.dispose();
        await link.close();
      }
    });
  }
});
