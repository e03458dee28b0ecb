// The proxy behind a real faulty link (tests/support/fault-link.mjs: a TCP
// proxy on 127.0.0.1 that cuts, stalls, delays and re-chunks the proxy's bytes
// to the client), seeded so that every run replays the same faults. The
// client is createStateSync + connectStateSync. For every seed:
//  - whenever the client is 'synced', its state is one the upstream held;
//  - at the end it has converged on the upstream's final state;
//  - with resumption, chat text arrives complete and exactly once, the tool
//    call's arguments too, and the agent ran once, never aborted.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startFaultLink } from '../support/fault-link.mjs';
import { buildScript, messageTexts, SHAPES } from '../support/upstreams.mjs';
import { plain } from './support.mjs';
import { connectClient, FAULTS, isOneOf, runInput, stack } from './proxy-support.mjs';

const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
const totals = { cuts: 0, connections: 0, resumes: 0 };


function toolArgs(events) {
  return events.filter((e) => e.type === 'TOOL_CALL_ARGS').map((e) => e.delta).join('');
}

describe('proxy behind a faulty link', () => {
  for (const seed of SEEDS) {
    const shape = SHAPES[seed % SHAPES.length];
    test(`seed ${seed} (${shape} upstream): synced states are upstream states, convergence, chat text exactly once`, { timeout: 20000 }, async () => {
      const s = await stack({ upstream: { shape, script: buildScript({ seed, steps: 24 }), stepMs: 2 } });
      const link = await startFaultLink({ target: { host: '127.0.0.1', port: s.port }, seed, ...FAULTS });
      try {
        const client = await connectClient(link.url('/agent'), runInput('t1', `run-${seed}`));
        await client.done;
        const history = s.upstream.history('t1');
        for (const state of client.synced) assert.ok(isOneOf(state, history), 'a synced state the upstream never held');
        assert.equal(client.sync.status, 'synced');
        assert.deepEqual(plain(client.sync.state), s.upstream.state('t1'));
        assert.equal(s.upstream.requests.length, 1, 'one agent run, however many reconnects');
        const [request] = s.upstream.requests;
        assert.equal(request.completed, true);
        assert.deepEqual(messageTexts(client.events), messageTexts(request.events));
        assert.equal(toolArgs(client.events), toolArgs(request.events));
        const count = (type) => client.events.filter((e) => e.type === type).length;
        assert.equal(count('RUN_STARTED'), 1);
        assert.equal(count('TEXT_MESSAGE_CONTENT'), request.events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').length);
        assert.ok(count('RUN_FINISHED') >= 1); // repeated (same id) only if cut right after it
        const { resumes } = s.proxy.stats();
        totals.cuts += link.stats.cuts;
        totals.connections += link.stats.connections;
        totals.resumes += resumes.exact + resumes['caught-up'] + resumes.lost;
        assert.deepEqual(s.errors, []);
      } finally {
        await link.close();
        await s.close();
      }
    });
  }

  test('the seeds above did cut connections, and each cut was resumed (the property is not vacuous)', () => {
    assert.ok(totals.cuts >= SEEDS.length, JSON.stringify(totals));
    assert.equal(totals.resumes, totals.connections - SEEDS.length, JSON.stringify(totals));
  });
});
