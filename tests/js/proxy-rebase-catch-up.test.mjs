// Regression (found by tests/frameworks with a real PydanticAI server): a
// run whose RunAgentInput.state is not the thread's state, byte for byte (a
// client sends its keys in another order, or its own edits), is out of step,
// so the proxy rebases its first state event; the thread's state is then the
// emitter's, and it must still count as vouched. Before the fix a client cut
// right after RUN_STARTED got a catch-up with no state at all, and its engine
// reconnected for ever at the same position.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { createStateSyncProxy, readStream, serve } from './proxy-support.mjs';

/** An upstream whose second run holds after RUN_STARTED until `release()`. */
async function gatedUpstream() {
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const input = JSON.parse(body);
    const send = (event) => res.write(`data: ${JSON.stringify(event)}\n\n`);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
    if (input.runId === 'r2') await gate;
    send({ type: 'STATE_SNAPSHOT', snapshot: { doc: 'terms '.repeat(100), paid: input.runId === 'r2' } });
    res.end(`data: ${JSON.stringify({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId })}\n\n`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/agent`, release, close: () => new Promise((r) => server.close(r)) };
}

const input = (runId, state) => ({ threadId: 't', runId, state, messages: [], tools: [], context: [], forwardedProps: {} });

test('a client cut after RUN_STARTED of a rebased run is caught up with the state it missed', async () => {
  const upstream = await gatedUpstream();
  const proxy = createStateSyncProxy({ upstream: upstream.url });
  const server = await serve(proxy);
  try {
    const first = await readStream(server.url(), { input: input('r1', {}) });
    const { seq, epoch } = first.events.find((e) => e.data.metadata).data.metadata['agui-state-sync'];
    const position = { 'x-agui-state-seq': String(seq), 'x-agui-state-epoch': epoch };
    // Run 2's state lists its keys in another order: out of step, so its snapshot is rebased.
    const state = { paid: false, doc: 'terms '.repeat(100) };
    const cut = await readStream(server.url(), { input: input('r2', state), headers: position, stop: (events) => events.length >= 1 });
    assert.equal(cut.events[0].data.type, 'RUN_STARTED');
    upstream.release();
    const resumed = await readStream(server.url(), { input: input('r2', state), headers: { ...position, 'last-event-id': cut.events[0].id } });
    const deltas = resumed.events.filter((e) => e.data.type === 'STATE_DELTA');
    assert.equal(deltas.length, 1, `the missed change is caught up: ${resumed.text}`);
    assert.equal(deltas[0].data.metadata['agui-state-sync'].baseSeq, seq);
    assert.deepEqual(deltas[0].data.delta, [{ op: 'replace', path: '/paid', value: true }]);
    assert.equal(resumed.events.at(-1).data.type, 'RUN_FINISHED');
  } finally {
    proxy.close();
    await server.close();
    await upstream.close();
  }
});
