// sequenceState({ store }) (issue 17, section 1): the middleware's thread
// emitters bound to their threadId in memoryStore() or a real redis-server. A
// new middleware (a restarted server, or another instance) continues the
// thread: a client that missed the last event of the previous run gets it
// replayed in the same epoch, and the run's events keep their order although
// stamping waits for the store.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BRIEF, CounterAgent } from './ag-ui-support.mjs';
import { jsDir } from './support.mjs';
import { storeKinds } from './store-support.mjs';

const { sequenceState } = await import(join(jsDir, 'src', 'ag-ui.js'));
const T = { timeout: 30000 };

async function collect(middleware, agent, input) {
  const events = [];
  await new Promise((resolve, reject) => middleware.run(input, agent).subscribe({ next: (e) => events.push(e), error: reject, complete: resolve }));
  return events;
}
const input = (extra = {}) => ({ threadId: 'T', runId: 'R', messages: [], tools: [], context: [], state: { brief: BRIEF, items: [], total: 0 }, forwardedProps: {}, ...extra });
const isState = (e) => e.type.startsWith('STATE_');

for (const kind of storeKinds()) {
  describe(`sequenceState() with ${kind.name}`, () => {
    before(() => kind.setup());
    after(() => kind.teardown());

    test('a new middleware on the store continues the thread: replay in the same epoch, events in order', T, async () => {
      const first = sequenceState({ store: kind.open(), emitter: { snapshotRatio: 100 } });
      const run1 = await collect(first, new CounterAgent({ target: 3, stepMs: 0 }), input({ forwardedProps: { stateSync: { lastSeq: null, epoch: null } } }));
      const states = run1.filter(isState);
      assert.deepEqual(states.map((e) => e.metadata['agui-state-sync'].seq), [0, 1, 2, 3]);
      const epoch = states[0].metadata['agui-state-sync'].epoch;
      const others = run1.filter((e) => !isState(e)).map((e) => e.type);
      assert.equal(others[0], 'RUN_STARTED');
      assert.equal(others.at(-1), 'RUN_FINISHED');
      // Each item's text message comes before its delta, as the agent sent them.
      const order = run1.map((e) => (isState(e) ? `S${e.metadata['agui-state-sync'].seq}` : e.type));
      assert.ok(order.indexOf('S1') > order.indexOf('TEXT_MESSAGE_END'), order.join(' '));
      const atThree = first.emitterFor('T').state;
      first.dispose(); // the server restarts

      const second = sequenceState({ store: kind.open(), emitter: { snapshotRatio: 100 } });
      const atTwo = { ...atThree, items: atThree.items.slice(0, 2), total: 2 };
      const run2 = await collect(second, new CounterAgent({ target: 3, stepMs: 0 }),
        input({ runId: 'R2', state: atTwo, forwardedProps: { stateSync: { lastSeq: 2, epoch } } }));
      const caughtUp = run2.filter(isState);
      assert.equal(caughtUp[0].type, 'STATE_DELTA', 'a replay, not a snapshot');
      // The client's state is behind (seq 2): with a store it is where the agent starts, never
      // written (it would take seq 3 back). The agent's snapshot of it changes nothing; its delta
      // (one more item) goes on top of the thread as it is.
      assert.deepEqual(caughtUp.map((e) => e.metadata['agui-state-sync'].seq), [3, 4], 'seq 3 replayed, then the agent\'s item (4)');
      const items = second.emitterFor('T').state.items.map((item) => item.n);
      assert.deepEqual(items, [1, 2, 3, 3], 'seq 3\'s item stands, the agent\'s own goes after it');
      assert.ok(caughtUp.every((e) => e.metadata['agui-state-sync'].epoch === epoch));
      assert.equal(run2[0].type, 'RUN_STARTED');
      second.dispose();
    });
  });
}
