// The examples as people run them (issue 24, section 4): examples/langgraph and
// examples/pydantic-ai started with uvicorn on 127.0.0.1, in-process
// (app:app, StateSyncMiddleware) and unchanged behind the proxy CLI
// (app:unchanged), driven by the script their READMEs point at
// (examples/heal.mjs): a StateSyncHttpAgent through the seeded fault link, to
// the approval interrupt, approved through its guard, resumed, and the resume
// sent again. Per seed:
//  - the client ends synced, holding the backend's own state (GET /state: the
//    graph's checkpoint, the state the PydanticAI agent last sent);
//  - the approval was verified and paid once, the re-sent resume paid nothing.
// Over the seeds the link cut connections: the client healed.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repoRoot, startExample, startProxy } from './support.mjs';

const { heal } = await import(join(repoRoot, 'examples', 'heal.mjs'));
process.env.SUPPRESS_TRANSFORMATION_WARNINGS = 'true';
const SEEDS = [1, 2, 3];
const T = { timeout: 120000 };

for (const folder of ['langgraph', 'pydantic-ai']) {
  for (const setup of ['middleware', 'proxy']) {
    describe(`examples/${folder}: ${setup === 'proxy' ? 'app:unchanged behind the proxy CLI' : 'app:app (StateSyncMiddleware)'}`, () => {
      let server = null;
      let proxy = null;
      let cuts = 0;
      before(async () => {
        server = await startExample(folder, setup === 'proxy' ? 'unchanged' : 'app');
        if (setup === 'proxy') proxy = await startProxy(server.url);
      });
      after(async () => {
        await proxy?.stop();
        await server?.stop();
      });

      for (const seed of SEEDS) {
        test(`seed ${seed}: the client heals to the backend's state; the approval pays once`, T, async (t) => {
          const lines = [];
          const result = await heal({ url: (proxy ?? server).url, backend: server.url, seed, threadId: `${folder}-${setup}-${seed}`, print: (...parts) => lines.push(parts.join(' ')) });
          for (const line of lines) t.diagnostic(line);
          cuts += result.cuts;
          assert.equal(result.status, 'synced');
          assert.ok(result.own && Object.keys(result.own).length > 0, 'the backend holds a state for the thread');
          for (const [key, value] of Object.entries(result.own)) assert.deepEqual(result.state[key], value, `the backend's own ${key}`);
          assert.equal(result.payments.length, 1, 'paid once, the re-sent resume included');
          assert.deepEqual(result.state.paid?.receipt, result.payments[0].key.slice(0, 12), 'the client shows the payment the backend made');
          assert.equal(result.resent.at(-1)?.type, 'RUN_FINISHED', 'the re-sent resume gets the run\'s end, not a second run');
        });
      }
      test('the link cut connections: the client healed', () => {
        assert.ok(cuts > 0, `no cut over seeds ${SEEDS.join(', ')}`);
      });
    });
  }
}
