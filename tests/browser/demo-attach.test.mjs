// Attach on the demo server (issue 26, item 2), no browser: GET /agent with
// X-AGUI-Attach: <threadId> answers as the package's proxy does (docs/wire.md
// section 8). A client that never saw the run's stream (a reloaded page, a
// second page) gets the running run's RUN_STARTED, its own catch-up, the run's
// chat so far from its first word, then live: @ag-ui/client 1.0's verifyEvents
// accepts the stream, its text is the starter's, its state events rebuild the
// agent's state. With no run going it is 'idle': a run of its own that brings
// the state up to date (by replay from the client's position) and ends.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { verifyEvents } from '@ag-ui/client';
import { from, lastValueFrom, toArray } from 'rxjs';

import { until } from '../support/until.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DEMO = path.join(ROOT, 'demo');
const { applyPatch } = createRequire(path.join(DEMO, 'package.json'))('fast-json-patch');
const { startServer } = await import(path.join(DEMO, 'server', 'server.mjs'));
const { stateDigest } = await import(path.join(DEMO, 'server', 'pkg.mjs'));

const WIRE = 'agui-state-sync';

// An SSE response read as it arrives: `events` grows; `done` resolves at its end.
function follow(res) {
  const events = [];
  const decoder = new TextDecoder();
  let buffer = '';
  const done = (async () => {
    for await (const chunk of res.body) {
      buffer += decoder.decode(chunk, { stream: true });
      let i;
      while ((i = buffer.indexOf('\n\n')) >= 0) {
        const data = buffer.slice(0, i).split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart());
        buffer = buffer.slice(i + 2);
        if (data.length) events.push(JSON.parse(data.join('\n')));
      }
    }
    return events;
  })();
  return { events, done };
}

const texts = (events) => {
  const out = {};
  for (const e of events) {
    if (e.type === 'TEXT_MESSAGE_START') out[e.messageId] = '';
    if (e.type === 'TEXT_MESSAGE_CONTENT') out[e.messageId] += e.delta;
  }
  return out;
};

// The state a client holds after `events`, from `state` at `seq`.
function applyState(state, events) {
  for (const e of events) {
    if (e.type === 'STATE_SNAPSHOT') state = e.snapshot;
    if (e.type === 'STATE_DELTA') state = applyPatch(state, e.delta, true, false).newDocument;
  }
  return state;
}

const accepted = (events) => lastValueFrom(from(structuredClone(events)).pipe(verifyEvents(), toArray()));

test('demo server: an attach mid-run gets the run so far and then live; with no run going it is idle and catches up by replay', { timeout: 60000 }, async (t) => {
  const s = await startServer({ port: 0, stepMs: 20, quiet: true, preset: 'clean' });
  t.after(() => s.close());
  const at = (p) => new URL(p, s.url);
  const truth = async () => (await fetch(at('/truth?threadId=att'))).json();
  const clock = (paused) => fetch(at('/clock'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ paused }) });
  const attach = (headers = {}) => fetch(at('/agent'), { headers: { 'X-AGUI-Attach': 'att', ...headers } });

  const input = { threadId: 'att', runId: 'r1', state: {}, messages: [{ id: 'u1', role: 'user', content: 'go' }], tools: [], context: [], forwardedProps: {} };
  const starter = follow(await fetch(at('/agent'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(input) }));
  // Mid-run: the agent holds (POST /clock) once it has said something and written some state.
  await until(() => starter.events.some((e) => e.type === 'TEXT_MESSAGE_END') && starter.events.filter((e) => e.type === 'STATE_DELTA').length >= 6, 'the run to get going');
  await clock(true);
  const mid = await truth();
  const res = await attach();
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-agui-attach'), 'run');
  assert.equal(res.headers.get('x-agui-state-sync'), 'snapshot', 'a client without state gets the snapshot');
  const attached = follow(res);
  await until(() => attached.events.some((e) => e.type === 'STATE_SNAPSHOT'), 'the attach\'s catch-up');
  await clock(false);
  const [all, mine] = await Promise.all([starter.done, attached.done]);

  // One RUN_STARTED, the run's; the chat from its first word; valid for @ag-ui/client.
  assert.deepEqual(mine.filter((e) => e.type === 'RUN_STARTED').map((e) => e.runId), ['r1']);
  assert.equal(mine[0].type, 'RUN_STARTED');
  assert.equal(mine.at(-1).type, 'RUN_FINISHED');
  await accepted(mine);
  assert.deepEqual(texts(mine), texts(all), 'the attached client reads every message, the ones before it came in full');
  assert.ok(Object.keys(texts(mine)).length >= 2);
  // Its state: the snapshot at the seq the agent held at, then the live deltas.
  const snap = mine.find((e) => e.type === 'STATE_SNAPSHOT');
  assert.equal(snap.metadata[WIRE].seq, mid.seq);
  const end = await truth();
  assert.equal(stateDigest(applyState({}, mine)), end.digest);
  assert.deepEqual(end.connections.map((c) => [c.attached, c.mode]), [[false, 'snapshot'], [true, 'snapshot']]);

  // No run going: idle. A client a few deltas behind gets them (a replay), in a run of its own.
  const behind = end.seq - 3;
  const idle = await attach({ 'X-AGUI-State-Seq': String(behind), 'X-AGUI-State-Epoch': end.epoch });
  assert.equal(idle.headers.get('x-agui-attach'), 'idle');
  assert.equal(idle.headers.get('x-agui-state-sync'), 'replay');
  const caught = await follow(idle).done;
  await accepted(caught);
  assert.deepEqual([caught[0].type, caught.at(-1).type], ['RUN_STARTED', 'RUN_FINISHED']);
  assert.notEqual(caught[0].runId, 'r1', 'its own run');
  assert.equal(caught.filter((e) => e.type.startsWith('TEXT_')).length, 0);
  const replayed = caught.filter((e) => e.type === 'STATE_DELTA');
  assert.deepEqual(replayed.map((e) => e.metadata[WIRE].seq), [behind + 1, behind + 2, behind + 3]);
  const before = applyState({}, all.slice(0, all.findLastIndex((e) => e.metadata?.[WIRE]?.seq === behind) + 1));
  assert.equal(stateDigest(applyState(before, caught)), end.digest);

  // A thread the server never had: idle, nothing to catch up.
  const none = await fetch(at('/agent'), { headers: { 'X-AGUI-Attach': 'no-such-thread' } });
  assert.equal(none.headers.get('x-agui-attach'), 'idle');
  const empty = await follow(none).done;
  await accepted(empty);
  assert.deepEqual(empty.map((e) => e.type), ['RUN_STARTED', 'RUN_FINISHED']);
});
