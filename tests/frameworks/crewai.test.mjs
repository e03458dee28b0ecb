// CrewAI's flow adapter (ag-ui-crewai), issue 24: a Flow of plain Python
// methods (no LLM, no key; tests/frameworks/crewai_app.py) served unchanged,
// (a) behind the proxy CLI and (b) with StateSyncMiddleware in-process.
// StateSyncHttpAgent through the seeded fault link: whenever synced, its
// state is one the flow sent (in order); it ends at the flow's last state and
// the flow's own; the flow ran once for the runAgent(), however often the link
// cut it, and its streamed reply arrives once, whole (both set-ups hold the run
// past a cut connection and resume it); ag-ui-validate finds no error in our
// stream on a clean link.
// The flow has no approval (the adapter's human-in-the-loop needs a feedback
// provider): frameworks.test.mjs covers approvals with LangGraph and PydanticAI.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { startFaultLink } from '../support/fault-link.mjs';
import { chatText, countingFetch, frameworkStates, repoRoot, sseEvents, startFramework, startProxy, validateCapture } from './support.mjs';

const { StateSyncHttpAgent } = await import(join(repoRoot, 'js', 'src', 'ag-ui.js'));
process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';
const T = { timeout: 120000 };
const FAULTS = { cutProbability: 0.7, cutAfterBytes: [200, 11000], stallProbability: 0.02, stallMs: 20, delayMs: [0, 0], chunkBytes: [1, 1400] };
const USER = { id: 'user-1', role: 'user', content: 'Draft the offsite payment.' };
const plain = (value) => JSON.parse(JSON.stringify(value));
const dir = mkdtempSync(join(tmpdir(), 'agui-crewai-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function runOnce(url, threadId, seed) {
  const log = { bytes: 0, requests: 0 };
  const agent = new StateSyncHttpAgent({ url, threadId, initialState: { seed }, initialMessages: [USER], fetch: countingFetch(log), stateSync: { backoff: { initialMs: 5, maxMs: 50, jitter: 0 } } });
  await agent.ready;
  const synced = [];
  const off = agent.stateSync.subscribe(() => {
    if (agent.stateSync.status === 'synced') synced.push(plain(agent.stateSync.state));
  });
  const events = [];
  await agent.runAgent({ runId: `${threadId}-1` }, { onEvent: ({ event }) => events.push(event) });
  off();
  const result = { state: plain(agent.state), status: agent.stateSync.status, synced, events, log };
  agent.dispose();
  return result;
}

for (const setup of ['proxy', 'middleware']) {
  describe(`crewai flow: ${setup === 'proxy' ? '(a) unchanged, behind the Node proxy' : '(b) StateSyncMiddleware in-process'}`, () => {
    let framework;
    let proxy;
    let endpoint;
    let cuts = 0;
    let cutInReply = false;
    before(async () => {
      framework = await startFramework('crewai', setup === 'proxy' ? 'none' : 'middleware');
      proxy = setup === 'proxy' ? await startProxy(framework.url) : null;
      endpoint = proxy ?? framework;
    });
    after(async () => {
      await proxy?.stop();
      await framework?.stop();
    });

    for (const seed of [1, 2, 3, 4]) {
      test(`seed ${seed}: synced states are the flow's, convergence to its own`, T, async (t) => {
        const threadId = `crewai-${setup}-${seed}`;
        const link = await startFaultLink({ target: { host: '127.0.0.1', port: endpoint.port }, seed, ...FAULTS });
        const client = await runOnce(link.url('/agent'), threadId, seed).finally(() => link.close());
        cuts += link.stats.cuts;
        // A response that broke off inside the reply (some of its text, not its end): the rest came over a reconnect.
        cutInReply ||= client.log.bodies.slice(0, -1).map((body) => Buffer.concat(body).toString('utf8'))
          .some((text) => text.includes('"TEXT_MESSAGE_CONTENT"') && !text.includes('"TEXT_MESSAGE_END"'));
        const truth = await framework.truth(threadId);
        const states = frameworkStates(truth);
        let at = 0;
        for (const state of client.synced) {
          const found = states.findIndex((s, i) => i >= at && isDeepStrictEqual(s, state));
          assert.ok(found >= 0, `a synced state the flow never sent (or only before the last shown): ${JSON.stringify(state).slice(0, 200)}`);
          at = found;
        }
        assert.equal(client.status, 'synced');
        assert.deepEqual(client.state, states.at(-1));
        for (const [key, value] of Object.entries(truth.state)) assert.deepEqual(client.state[key], value, `the flow's own ${key}`);
        const sent = truth.runs.reduce((n, run) => n + run.bytes, 0);
        t.diagnostic(JSON.stringify({ app: 'crewai', setup, seed, cuts: link.stats.cuts, frameworkBytes: sent, clientBytes: client.log.bytes, requests: client.log.requests, frameworkRuns: truth.runs.length }));
        assert.equal(truth.runs.length, 1, 'the flow ran once for the runAgent(), however many reconnects');
        const theirs = chatText(truth.runs.flatMap((run) => sseEvents(run.text)));
        assert.ok(theirs.length > 0 && theirs.every(([, text]) => text.length > 0), 'the flow streamed a reply (the check below is not vacuous)');
        await t.test('chat text arrives once, whole', () => {
          assert.deepEqual(chatText(client.events), theirs, 'the client shows exactly the messages the flow sent, each whole, each once');
        });
      });
    }

    test('the link cut connections, one inside the streamed reply: the runs above were resumed', () => {
      assert.ok(cuts > 0, 'no seed was cut');
      assert.ok(cutInReply, 'no seed was cut inside the reply');
    });

    test('ag-ui-validate: no error in our stream on a clean link', T, async (t) => {
      const threadId = `crewai-${setup}-validate`;
      const client = await runOnce(endpoint.url, threadId, 7);
      const file = join(dir, `${threadId}.sse`);
      writeFileSync(file, Buffer.concat(client.log.bodies.flat()));
      const { status, report } = validateCapture(file);
      t.diagnostic((report?.diagnostics ?? []).map((d) => `${d.rule} ${d.severity}: ${d.message}`).join('; ') || 'clean');
      assert.equal(status, 0, JSON.stringify(report?.diagnostics ?? report));
    });
  });
}
