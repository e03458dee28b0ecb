// The run history's drawing (demo/src/history.js), without a browser: lanes
// as a git graph has them (a run's first child continues its lane, every
// later child opens a new one) and the lineage a picked run highlights, on
// seeded random trees checked against their definitions.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { laneRuns, lineageOf } = await import(path.join(ROOT, 'demo', 'src', 'history.js'));
const { rng } = await import(path.join(ROOT, 'tests', 'js', 'support.mjs'));

const run = (runId, parentRunId) => ({ runId, parentRunId });

test('history: lanes and lineage of a small tree', () => {
  const runs = laneRuns([run('r1', null), run('r2', 'r1'), run('r3', 'r1'), run('r4', 'r3'), run('r5', 'r2'), run('r6', 'r2')]);
  assert.deepEqual(runs.map((r) => r.lane), [0, 0, 1, 1, 0, 2]);
  assert.deepEqual([...lineageOf(runs, 'r4')], ['r4', 'r3', 'r1']);
  assert.deepEqual([...lineageOf(runs, 'r1')], ['r1']);
  assert.deepEqual([...lineageOf(runs, 'nope')], []);
});

test('history: on random trees, a lane is one chain of first children, and lineages end at a first run (seeded)', () => {
  for (let seed = 1; seed <= 300; seed++) {
    const random = rng(seed);
    const input = [];
    for (let i = 0; i < 1 + Math.floor(random() * 12); i++) {
      const parent = i === 0 || random() < 0.1 ? null : input[Math.floor(random() * i)].runId;
      input.push(run(`r${i}`, parent));
    }
    const runs = laneRuns(input);
    const firstChild = new Map();
    for (const r of runs) if (r.parentRunId !== null && !firstChild.has(r.parentRunId)) firstChild.set(r.parentRunId, r.runId);
    const byId = new Map(runs.map((r) => [r.runId, r]));
    for (const r of runs) {
      const continues = r.parentRunId !== null && firstChild.get(r.parentRunId) === r.runId;
      if (continues) assert.equal(r.lane, byId.get(r.parentRunId).lane, `seed ${seed}: ${r.runId} continues its parent's lane`);
      else assert.ok(runs.every((o) => o === r || o.lane !== r.lane || runs.indexOf(o) > runs.indexOf(r)), `seed ${seed}: ${r.runId} opens a new lane`);
      const chain = [...lineageOf(runs, r.runId)];
      assert.equal(chain[0], r.runId);
      assert.equal(byId.get(chain.at(-1)).parentRunId, null, `seed ${seed}: the lineage of ${r.runId} reaches a first run`);
      for (let k = 1; k < chain.length; k++) assert.equal(byId.get(chain[k - 1]).parentRunId, chain[k]);
    }
  }
});
