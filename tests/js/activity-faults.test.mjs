// Activities behind a real faulty link (tests/support/fault-link.mjs: cuts,
// stalls, re-chunking; seeded), from the senders that stamp them: the proxy in
// front of a plain AG-UI backend whose cards change (tests/support/upstreams.mjs),
// and sequenceState() on a server whose agent is that backend (an HttpAgent).
// The client is createStateSync({ activities: true }) + connectStateSync. For
// every seed:
//  - every activity content the client showed as verified is one the agent held;
//  - it ends synced on the sender's content of every activity.
// (tests/python/live/activity-faults.test.mjs: the same from Python's sequence_state.)
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { HttpAgent } from '@ag-ui/client';
import { checkActivities, connectActivityClient } from '../support/activity-client.mjs';
import { startFaultLink } from '../support/fault-link.mjs';
import { buildScript, SHAPES, startUpstream } from '../support/upstreams.mjs';
import { startSequencedServer } from './ag-ui-support.mjs';
import { FAST, FAULTS, runInput, stack } from './proxy-support.mjs';
import { jsDir, pkg } from './support.mjs';

const { sequenceState } = await import(join(jsDir, 'src', 'ag-ui.js'));
const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];
const T = { timeout: 60000 };
// A reconnect to sequenceState() runs the agent again: fewer cuts, so that a run gets through.
const RERUN_FAULTS = { ...FAULTS, cutProbability: 0.6, cutAfterBytes: [150, 1500] };
const totals = { proxy: { cuts: 0, checked: 0 }, sequenceState: { cuts: 0, checked: 0 } };

function historyOf(upstream, threadId, ids) {
  return Object.fromEntries(ids.map((id) => [id, upstream.activityHistory(threadId, id)]));
}

describe('activities behind a faulty link', () => {
  after(() => {
    console.log(`# activity faults: ${JSON.stringify(totals)}`);
    assert.ok(totals.proxy.cuts >= SEEDS.length / 2 && totals.sequenceState.cuts >= SEEDS.length / 2, 'the links did cut');
  });

  for (const seed of SEEDS) {
    const shape = SHAPES[seed % 2]; // 'docs' (snapshot, then deltas) or 'snapshots' (the whole card each time)
    test(`proxy, seed ${seed} (${shape} upstream): verified activity content is the agent's, and converges`, T, async () => {
      const script = buildScript({ seed, steps: 20, activities: 3 });
      const s = await stack({ upstream: { shape, script, stepMs: 2 } });
      const link = await startFaultLink({ target: { host: '127.0.0.1', port: s.port }, seed, ...FAULTS });
      try {
        const client = await connectActivityClient(pkg, link.url('/agent'), runInput('t1', `run-${seed}`), FAST);
        await client.done;
        const ids = Object.keys(s.upstream.activities('t1'));
        const current = s.upstream.activities('t1'); // the proxy's run went on through every cut: every change reached it
        totals.proxy.checked += checkActivities(client, historyOf(s.upstream, 't1', ids), current, `seed ${seed}`);
        totals.proxy.cuts += link.stats.cuts;
        assert.equal(s.upstream.requests.length, 1, 'one agent run, however many reconnects');
        assert.deepEqual(s.errors, []);
        client.sync.dispose();
      } finally {
        await link.close();
        await s.close();
      }
    });

    test(`sequenceState(), seed ${seed}: verified activity content is the agent's, and converges`, T, async () => {
      const upstream = await startUpstream({ shape: 'snapshots', script: buildScript({ seed, steps: 14, activities: 2, textEvery: 0, toolCall: false }), stepMs: 1 });
      const middleware = sequenceState();
      const server = await startSequencedServer(middleware, new HttpAgent({ url: upstream.url }));
      const link = await startFaultLink({ target: { host: '127.0.0.1', port: server.port }, seed, ...RERUN_FAULTS });
      try {
        const client = await connectActivityClient(pkg, link.url('/agent'), runInput('t1', `run-${seed}`), FAST);
        await client.done;
        const activities = middleware.emitterFor('t1').activities;
        const ids = Object.keys(upstream.activities('t1'));
        const history = historyOf(upstream, 't1', ids);
        // The sender's content (an agent run cut mid-way may have changed a card it never sent).
        const current = Object.fromEntries(ids.filter((id) => activities.content(id) !== undefined).map((id) => [id, activities.content(id)]));
        totals.sequenceState.checked += checkActivities(client, history, current, `seed ${seed}`);
        totals.sequenceState.cuts += link.stats.cuts;
        totals.sequenceState.connections = (totals.sequenceState.connections ?? 0) + link.stats.connections;
        client.sync.dispose();
      } finally {
        await link.close();
        await server.close();
        middleware.dispose();
        await upstream.close();
      }
    });
  }
});
