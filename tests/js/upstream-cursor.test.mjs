// UpstreamCursor (js/src/server/upstream-cursor.js): one agent run's state
// events on its thread's emitter, as the core's cursor plans them. A plain
// emitter is written by the core in the planning call (planWrite: one parse of
// a snapshot); a store-bound one carries out the plan's tries itself and
// settles. Seeded: both routes, driven with the same agent events while
// another writer moves the thread now and then, send the same events and
// reach the same state (read after every write, so a stale parsed state shows).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { jsDir, pkg, rng } from './support.mjs';

const { createStateEmitter } = pkg;
const { memoryStore } = await import(join(jsDir, 'src', 'server.js'));
const { UpstreamCursor } = await import(join(jsDir, 'src', 'server', 'upstream-cursor.js'));

// A random event of the agent, which owns /a: mostly deltas, some snapshots of
// its whole view (its /o as it last saw it), now and then a delta that does not fit.
function agentEvent(random, agent) {
  const key = `k${Math.floor(random() * 5)}`;
  const roll = random();
  if (roll < 0.15) return { type: 'STATE_SNAPSHOT', snapshot: structuredClone(agent), timestamp: 1 };
  if (roll < 0.2) return { type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/a/missing/x', value: 1 }] };
  if (roll < 0.25) return { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'hi' };
  if (key in agent.a && random() < 0.3) {
    delete agent.a[key];
    return { type: 'STATE_DELTA', delta: [{ op: 'remove', path: `/a/${key}` }] };
  }
  agent.a[key] = Math.floor(random() * 100);
  return { type: 'STATE_DELTA', delta: [{ op: 'add', path: `/a/${key}`, value: agent.a[key] }] };
}

const summary = (written) => ({ events: written.events, state: written.state, dropped: written.dropped, code: written.error?.code ?? null });

test('a plain emitter (planWrite) and a store-bound one (plan, tries, settle) send the same events (seeded)', async () => {
  for (let seed = 1; seed <= 30; seed++) {
    const random = rng(seed);
    const initialState = { a: {}, o: {} };
    const plain = await createStateEmitter({ epoch: 'e', initialState });
    const bound = await createStateEmitter({ store: memoryStore(), key: 'k', epoch: 'e', initialState });
    const cursors = [await UpstreamCursor.create(), await UpstreamCursor.create()];
    cursors[0].begin(initialState, false, plain.seq);
    cursors[1].begin(initialState, false, bound.seq);
    const agent = structuredClone(initialState);
    for (let step = 0; step < 40; step++) {
      const where = `seed ${seed}, step ${step}`;
      if (random() < 0.2) { // another writer (a client's edit), on both threads alike
        const ops = [{ op: 'add', path: `/o/w${step}`, value: step }];
        assert.deepEqual(plain.patch(ops), await bound.patch(ops), where);
      }
      assert.deepEqual(plain.state, bound.state, where); // parsed now: the write below must drop it
      const event = agentEvent(random, agent);
      const one = cursors[0].write(plain, event);
      const two = await cursors[1].write(bound, event);
      assert.deepEqual(summary(one), summary(two), where);
      assert.deepEqual(plain.state, bound.state, where);
      if (event.type === 'TEXT_MESSAGE_CONTENT') assert.deepEqual(one.events, [event], `${where}: passed on as it is`);
      if (event.type === 'STATE_SNAPSHOT' && one.dropped === null) {
        assert.deepEqual(plain.state.a, agent.a, `${where}: a snapshot leaves the agent's part as the agent has it`);
      }
    }
    for (const cursor of cursors) cursor.dispose();
    plain.dispose();
    bound.dispose();
  }
});

test('a state event JSON cannot hold, or an emitter gone: dropped with a code, nothing written', async () => {
  const emitter = await createStateEmitter({ epoch: 'e', initialState: { n: 0 } });
  const cursor = await UpstreamCursor.create();
  cursor.begin({ n: 0 }, false, emitter.seq);
  const cyclic = { n: 1 };
  cyclic.self = cyclic;
  const refused = cursor.write(emitter, { type: 'STATE_SNAPSHOT', snapshot: cyclic });
  assert.deepEqual([refused.events, refused.dropped], [[], 'invalid-argument']);
  assert.equal(emitter.seq, 0);
  const written = cursor.write(emitter, { type: 'STATE_SNAPSHOT', snapshot: { n: 2 } });
  assert.equal(written.dropped, null);
  assert.deepEqual(emitter.state, { n: 2 });
  emitter.dispose();
  const gone = cursor.write(emitter, { type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/n', value: 3 }] });
  assert.deepEqual([gone.events, gone.dropped], [[], 'disposed']);
  cursor.dispose();
});
