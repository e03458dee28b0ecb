// Activities from Python behind a real faulty link (make py-live-test): a
// Python AG-UI server (tests/python/live/activity_server.py: uvicorn,
// sequence_state) whose agent sends each card's whole content after every
// change, read from Node by createStateSync({ activities: true }) +
// connectStateSync through the seeded fault link. For every seed:
//  - every activity content the client showed as verified is one the agent held;
//  - it ends synced on the sender's content of every card.
// The Node senders' side is tests/js/activity-faults.test.mjs.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { checkActivities, connectActivityClient } from '../../support/activity-client.mjs';
import { startFaultLink } from '../../support/fault-link.mjs';
import { pkg } from '../../js/support.mjs';
import { startPythonServer } from './python-server.mjs';

const SEEDS = Array.from({ length: 8 }, (_, i) => i + 1);
const BACKOFF = { initialMs: 5, maxMs: 50, jitter: 0 };
const FAULTS = { cutProbability: 0.6, cutAfterBytes: [150, 1500], stallProbability: 0.02, stallMs: 30, delayMs: [0, 1], chunkBytes: [1, 900] };

let server;
const totals = { cuts: 0, connections: 0, checked: 0 };

before(async () => {
  const python = await startPythonServer('activity_server.py');
  server = {
    ...python,
    async view(threadId) {
      const response = await fetch(`http://127.0.0.1:${python.port}/threads/${encodeURIComponent(threadId)}`);
      assert.equal(response.status, 200);
      return response.json();
    },
  };
});

after(async () => {
  await server?.close();
  console.log(`# python activity faults: ${SEEDS.length} seeds, ${totals.connections} connections, ${totals.cuts} cuts, ${totals.checked} verified contents checked`);
  assert.ok(totals.cuts >= SEEDS.length / 2, 'the link did cut');
});

for (const seed of SEEDS) {
  test(`seed ${seed}: verified activity content is the Python agent's, and converges`, { timeout: 60000 }, async () => {
    const link = await startFaultLink({ target: { host: '127.0.0.1', port: server.port }, seed, ...FAULTS });
    const threadId = `cards-${seed}`;
    try {
      const input = { threadId, runId: `run-${seed}`, state: {}, messages: [], tools: [], context: [], forwardedProps: { seed, steps: 16 } };
      const client = await connectActivityClient(pkg, link.url('/agent'), input, BACKOFF);
      await client.done;
      const view = await server.view(threadId);
      // The sender's content (a run cut mid-way may have changed a card it never sent).
      totals.checked += checkActivities(client, view.history, view.sent, `seed ${seed}`);
      totals.cuts += link.stats.cuts;
      totals.connections += link.stats.connections;
      client.sync.dispose();
    } finally {
      await link.close();
    }
  });
}
