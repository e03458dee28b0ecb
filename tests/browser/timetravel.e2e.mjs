// Time travel in the demo (issue 16, section 3), in headless Chromium, on a
// faulty stream. The thread runs twice: the agent's first run, then a
// follow-up that carries the user's budget limit. Under the panes:
//  - the run history lists both runs, with the lineage drawn;
//  - picking the first run shows the state it ended with, replayed from the
//    server's log in the page (stateAt), and it is the digest the agent
//    recorded when that run ended;
//  - "Branch from here" starts a third run whose parentRunId is the first:
//    the agent starts again from that state (not the follow-up's), both
//    panes follow it, and the history draws the branch in its own lane;
//  - the seq slider goes back inside a run (stateAt at a seq);
//  - the follow-up's branch is intact (picking it still shows the user's
//    limit), and an approval on the branch is verified against it.
// The log is also replayed here, in Node, with the package's stateAt.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import { ARTIFACTS, eur, launchChromium, ROOT, startServer, truthOf, waitData } from './e2e-support.mjs';

const { listRuns, parseLog, stateAt } = await import(path.join(ROOT, 'js', 'src', 'log.js'));
const { initEngine, stateDigest } = await import(path.join(ROOT, 'js', 'src', 'index.js'));
await initEngine();
const { AGENT_LIMIT } = await import(path.join(ROOT, 'demo', 'src', 'edit-policy.js'));

const FAULTS = { seed: 5, drop: 0.05, duplicate: 0.05, reorder: 0.06, latencyMs: 10, jitterMs: 20 };
const STEP_MS = 70;
const MINE = 21000;

const rowsOf = (page) => page.$$eval('[data-testid="history-run"]', (els) => els.map((e) => ({ ...e.dataset })));
const edgesOf = (page) => page.$$eval('[data-testid="history-graph"] path', (els) => Object.fromEntries(els.map((e) => [e.dataset.edge, e.dataset.on])));
const inStep = (page, timeout) => page.waitForFunction(
  () => window.__demo.finished.get() && !window.__demo.running.get() && document.querySelector('[data-testid="sync-match"]')?.dataset.state === 'match',
  null, { timeout },
);

async function pick(page, runId) {
  await page.locator(`[data-testid="history-run"][data-run-id="${runId}"]`).click();
  await waitData(page, 'history-view', 'runId', runId, 10000);
  await page.waitForFunction(() => document.querySelector('[data-testid="history-view"]').dataset.digest !== '', null, { timeout: 10000 });
  const view = await page.getByTestId('history-view').evaluate((el) => ({ ...el.dataset }));
  return { ...view, compare: await page.getByTestId('history-compare').textContent() };
}

// Moves the picked run's seq slider (React listens to 'input'); `shows` is
// the view's data-seq then ('end' at the run's last seq).
async function slideTo(page, seq, shows = String(seq)) {
  await page.getByTestId('history-seq').evaluate((el, value) => {
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(el, String(value));
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, seq);
  await page.waitForFunction((v) => {
    const el = document.querySelector('[data-testid="history-view"]');
    return el.dataset.seq === v && el.dataset.digest !== '';
  }, shows, { timeout: 10000 });
  return page.getByTestId('history-view').evaluate((el) => ({ ...el.dataset }));
}

// Run 1, then the user's limit sent with run 2: both end in step with the agent.
async function twoRuns(page) {
  await page.getByTestId('interrupt').waitFor({ timeout: 60000 });
  await inStep(page, 30000);
  await waitData(page, 'run-history', 'count', '1', 10000);
  await page.getByTestId('sync-limit-input').fill(String(MINE));
  await page.getByTestId('sync-limit-save').click();
  await waitData(page, 'sync-edit-status', 'status', 'pending', 2000);
  await page.getByTestId('sync-continue').click();
  await waitData(page, 'sync-edit-status', 'status', 'acked', 20000);
  await page.waitForFunction(() => !window.__demo.transcript.get().interrupt, null, { timeout: 5000 }).catch(() => {});
  await page.getByTestId('interrupt').waitFor({ timeout: 20000 });
  await inStep(page, 20000);
  await waitData(page, 'run-history', 'count', '2', 10000);
}

test('demo: the run history shows each run\'s state from the log, draws the lineage, and branches from an earlier run', { timeout: 150000 }, async (t) => {
  const server = startServer({ faults: FAULTS, stepMs: STEP_MS });
  t.after(() => server.child.kill('SIGTERM'));
  const url = await server.url;
  const { page, pageErrors } = await launchChromium(t, 'timetravel');
  await page.goto(url);
  await page.waitForFunction(() => window.__demo && window.__demo.threadId, null, { timeout: 15000 });
  const threadId = await page.evaluate(() => window.__demo.threadId);
  await twoRuns(page);

  let truth = await truthOf(page, threadId);
  const [run1, run2] = truth.runs.map((r) => r.runId);
  assert.deepEqual(await rowsOf(page).then((rows) => rows.map((r) => [r.runId, r.parent, r.branched, r.lane, r.status])), [
    [run1, '', 'false', '0', 'finished'], [run2, run1, 'false', '0', 'finished'],
  ]);
  assert.equal(truth.limit, MINE, 'the follow-up applied the user\'s limit');

  // The first run's end, replayed from the log in the page: the agent's own limit, as the agent recorded it.
  const first = await pick(page, run1);
  assert.equal(first.digest, truth.runs[0].ended.digest, 'the page\'s replay of the log is what the agent held when run 1 ended');
  assert.equal(Number(first.limit), AGENT_LIMIT);
  assert.match(first.compare, /Differs from the state the panes show now in: budget/);
  assert.deepEqual(await edgesOf(page), { [`${run1}->${run2}`]: 'false' }, 'run 1 alone is the picked lineage');
  // Inside the run: the state at seq 10, replayed in the page as in Node; no branch from the middle.
  const early = await slideTo(page, 10);
  const log2 = parseLog(await (await fetch(new URL(`/log?threadId=${threadId}`, url))).text());
  assert.equal(early.digest, stateDigest(await stateAt(log2, { runId: run1, seq: 10, epoch: truth.runs[0].ended.epoch })));
  assert.notEqual(early.digest, first.digest);
  assert.equal(await page.getByTestId('history-branch').isDisabled(), true);
  const end = await slideTo(page, truth.runs[0].ended.seq, 'end');
  assert.deepEqual([end.seq, end.digest], ['end', first.digest]);
  await page.screenshot({ path: path.join(ARTIFACTS, 'timetravel-picked.png'), fullPage: true });

  // Branch from run 1: a third run with parentRunId run 1, in its own lane.
  await page.getByTestId('history-branch').click();
  await page.waitForFunction((n) => window.__demo.truth.get()?.runs.length === n, 3, { timeout: 10000 });
  await page.getByTestId('interrupt').waitFor({ timeout: 30000 });
  await inStep(page, 30000);
  await waitData(page, 'run-history', 'count', '3', 10000);
  truth = await truthOf(page, threadId);
  const run3 = truth.runs[2].runId;
  assert.deepEqual(truth.runs.map((r) => r.parentRunId), [null, null, run1]);
  assert.equal(truth.parentRunId, run1);
  const rows = await rowsOf(page);
  assert.deepEqual([rows[2].runId, rows[2].parent, rows[2].branched, rows[2].lane], [run3, run1, 'true', '1']);

  // Both panes follow the branch: the state run 1 ended with, then the branch's own work.
  const panes = await page.evaluate(() => ({ sync: window.__demo.sync.state, ref: window.__demo.reference.state, status: window.__demo.sync.status }));
  assert.equal(panes.status, 'synced');
  assert.equal(stateDigest(panes.sync), truth.digest, 'the right pane holds the branch the agent holds');
  assert.equal(panes.sync.budget.limit, AGENT_LIMIT, 'not the follow-up\'s limit: that was another branch');
  assert.ok(panes.sync.budget.lines.some((l) => /^Guesthouse/.test(l.item)));
  assert.equal(await page.getByTestId('sync-limit').textContent(), eur(AGENT_LIMIT));

  // The branch picked: its lineage is run 1 and run 3; it is what the agent holds now.
  const third = await pick(page, run3);
  assert.equal(third.digest, truth.digest);
  assert.match(third.compare, /This is the state the agent holds now/);
  assert.deepEqual(await edgesOf(page), { [`${run1}->${run2}`]: 'false', [`${run1}->${run3}`]: 'true' });
  await page.getByTestId('run-history').screenshot({ path: path.join(ARTIFACTS, 'timetravel-history.png') });
  // The other branch is intact.
  const second = await pick(page, run2);
  assert.equal(Number(second.limit), MINE);
  assert.equal(second.digest, truth.runs[1].ended.digest);

  // The same log, replayed in Node: the lineage, and every run's end as the agent recorded it.
  const log = parseLog(await (await fetch(new URL(`/log?threadId=${threadId}`, url))).text());
  assert.deepEqual(listRuns(log).map((r) => [r.runId, r.parentRunId, r.branched]), [[run1, null, false], [run2, run1, false], [run3, run1, true]]);
  for (const r of truth.runs) assert.equal(stateDigest(await stateAt(log, { runId: r.runId })), r.ended.digest, `stateAt ${r.runId}`);

  // An approval on the branch is checked against the branch's state.
  await page.waitForFunction(() => !document.querySelector('[data-testid="sync-approve"]').disabled, null, { timeout: 10000 });
  await page.getByTestId('sync-approve').click();
  await waitData(page, 'sync-verdict', 'verdict', 'matched', 10000);
  await page.screenshot({ path: path.join(ARTIFACTS, 'timetravel-branched.png'), fullPage: true });
  assert.deepEqual(pageErrors, [], 'the page logged errors');
});
