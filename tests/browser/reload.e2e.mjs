// Reloads in the demo (issue 16, section 1), in headless Chromium: the right
// pane keeps a checkpoint in IndexedDB (createStateSync's persist). The page
// is reloaded in the middle of a faulty run, after the user typed a budget
// limit that the agent has not seen yet:
//  - the right pane comes back with its state and its pending edit (same editId);
//  - until the catch-up has answered, it is resyncing and Approve stays off;
//  - the server's connection log shows the reloaded page's catch-up: a replay
//    from the checkpoint's seq (reason 'restored'), not a snapshot;
//  - the pane then matches the agent, and the restored edit, sent with the
//    next run, is applied by the agent once.
// A second tab on the same thread (same URL) runs without a checkpoint and
// says why ('locked': the Web Locks API keeps the key to the first tab), and
// the first tab's checkpoint is untouched. Finally, one byte of the stored
// checkpoint is changed in IndexedDB: the next load discards it, says why
// (invalid-checkpoint), and starts from the server's snapshot.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import { ARTIFACTS, eur, launchChromium, startServer, truthOf, waitData } from './e2e-support.mjs';
import { until } from '../support/until.mjs';

// Drops, duplicates and reorders (no cuts: those depend on timing).
const FAULTS = { seed: 31, drop: 0.08, duplicate: 0.08, reorder: 0.1, latencyMs: 20, jitterMs: 30 };
const STEP_MS = 150;
const MINE = 18000;
// Reloaded in a stretch of state updates (the second day's section and a
// budget line), well before the agent writes the limit itself.
const RELOAD_AT_SEQ = 13;


// In the page: changes one digit of the stored checkpoint's lastSeq (its digest no longer matches).
async function tamperCheckpoint(key) {
  const db = await new Promise((resolve, reject) => {
    const open = indexedDB.open('agui-state-sync');
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  const tx = db.transaction('checkpoints', 'readwrite');
  const store = tx.objectStore('checkpoints');
  const text = await new Promise((resolve) => {
    const get = store.get(key);
    get.onsuccess = () => resolve(get.result);
  });
  if (typeof text !== 'string') return false;
  store.put(text.replace(/"lastSeq":(\d)/, (_, d) => `"lastSeq":${(Number(d) + 1) % 10}`), key);
  await new Promise((resolve) => { tx.oncomplete = resolve; });
  db.close();
  return true;
}


// What the page shows and holds right now.
const pageView = (page) => page.evaluate(() => {
  const { sync } = window.__demo;
  return {
    threadId: window.__demo.threadId, lastSeq: sync.lastSeq, status: sync.status, persistence: { ...sync.persistence, error: sync.persistence.error?.code ?? null, outcomes: undefined },
    pending: sync.pendingEdits().map((e) => ({ editId: e.editId, ops: e.ops })), limit: sync.state.budget?.limit, confirmedLimit: sync.confirmedState.budget?.limit,
    timeline: window.__demo.guardTimeline,
  };
});

test('demo: a reload mid-run restores the right pane from IndexedDB, catches up by replay, and keeps the pending edit', { timeout: 120000 }, async (t) => {
  const server = startServer({ faults: FAULTS, stepMs: STEP_MS });
  t.after(() => server.child.kill('SIGTERM'));
  const url = await server.url;
  const { browser, page, pageErrors } = await launchChromium(t, 'reload');

  await page.goto(url);
  await page.waitForFunction(() => window.__demo && /\d/.test(document.querySelector('[data-testid="sync-limit"]')?.textContent ?? ''), null, { timeout: 15000 });
  const first = await pageView(page);
  assert.equal(first.persistence.restore, 'none');
  assert.equal(first.persistence.active, true, 'IndexedDB and Web Locks are there: the pane persists');
  await page.getByTestId('sync-limit-input').fill(String(MINE));
  await page.getByTestId('sync-limit-save').click();
  await waitData(page, 'sync-edit-status', 'status', 'pending', 2000);

  // Mid-run, with a pending edit: reload, at whatever point the stream is.
  await page.waitForFunction((seq) => window.__demo.sync.lastSeq >= seq, RELOAD_AT_SEQ, { timeout: 30000, polling: 50 });
  const before = await pageView(page); // (it goes on receiving until the reload)
  assert.equal(before.pending.length, 1);
  assert.notEqual(before.confirmedLimit, MINE);
  // The agent holds (POST /clock) while the page goes away, so however long
  // the reload takes on a loaded machine, it cannot run far ahead: one that
  // missed much may get a snapshot because it is cheaper (the emitter's
  // snapshotRatio), which is not what this test is about. The reloaded page's
  // first request then waits for `looked` (the test reads the restored page
  // before any catch-up), lets the agent move on by two state events and holds
  // it again: a page that missed nothing would get 'current' and a heartbeat;
  // this one gets those few events, a replay.
  let letThrough;
  const looked = new Promise((resolve) => { letThrough = resolve; });
  const setClock = (paused) => fetch(new URL('/clock', url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ paused }) });
  const agentSeq = async () => (await (await fetch(new URL(`/truth?threadId=${before.threadId}`, url))).json()).seq;
  await setClock(true);
  const heldAt = await agentSeq();
  await page.route('**/agent', async (route) => {
    await looked;
    try {
      await setClock(false);
      await until(async () => (await agentSeq()) >= heldAt + 2, 'the agent to move on during the reload');
      await setClock(true);
    } finally {
      await route.continue();
    }
  }, { times: 1 });
  // Where the page really was when it went away.
  await page.evaluate(() => addEventListener('pagehide', () => sessionStorage.setItem('test:lastSeqAtUnload', String(window.__demo.sync.lastSeq))));
  const reloadStarted = Date.now();
  await page.reload();
  await page.waitForFunction(() => window.__demo && window.__demo.sync, null, { timeout: 15000 });
  const after = await pageView(page);
  const reloadMs = Date.now() - reloadStarted;
  const atUnload = Number(await page.evaluate(() => sessionStorage.getItem('test:lastSeqAtUnload')));
  await page.screenshot({ path: path.join(ARTIFACTS, 'reload-restored.png'), fullPage: true });

  // The pane came back: same thread, its state, its pending edit.
  assert.equal(after.threadId, before.threadId, 'the URL keeps the thread');
  assert.equal(after.persistence.restore, 'restored', JSON.stringify(after.persistence));
  assert.equal(after.persistence.active, true);
  assert.deepEqual(after.pending, before.pending, 'the pending edit, with its editId');
  assert.equal(after.limit, MINE, 'the user\'s value on top');
  assert.ok(after.lastSeq !== null && after.lastSeq <= atUnload && after.lastSeq >= Math.min(before.lastSeq, atUnload - 3),
    `the checkpoint's seq ${after.lastSeq} (the page was at ${atUnload} when it went away: at most the last calls are lost)`);
  await waitData(page, 'sync-persist', 'restore', 'restored', 5000);
  await waitData(page, 'sync-edit-status', 'status', 'pending', 5000);
  assert.equal(await page.getByTestId('sync-limit').textContent(), eur(MINE));
  // Until the catch-up answered: resyncing, Approve off.
  assert.equal(after.status, 'resyncing');
  assert.deepEqual(after.timeline.map((e) => [e.status, e.enabled, e.reason]), [['resyncing', false, 'resyncing']]);
  letThrough();

  // The server's log: the reloaded page asked from its checkpoint, and got a replay.
  let truth = await truthOf(page, after.threadId);
  await until(async () => (truth = await truthOf(page, after.threadId)).connections.some((c) => c.reason === 'restored'),
    () => `the reloaded page to reconnect: ${JSON.stringify(truth.connections)}`);
  const restoredConn = truth.connections.find((c) => c.reason === 'restored');
  assert.equal(restoredConn.lastSeq, after.lastSeq, 'it said where its checkpoint was');
  assert.equal(restoredConn.mode, 'replay', `a replay, not a snapshot: ${JSON.stringify(truth.connections)}`);
  assert.ok(restoredConn.events > 0, 'the agent had moved on during the reload');
  assert.ok(truth.connections.filter((c) => c.connNo > 1).every((c) => c.mode !== 'snapshot'), JSON.stringify(truth.connections));
  // The agent holds, so the replay is all there is to apply: once it has,
  // the restored page is in step and took no snapshot to get there.
  await page.waitForFunction(() => window.__demo.sync.status === 'synced', null, { timeout: 20000 });
  assert.equal(await page.evaluate(() => window.__demo.sync.metrics().snapshots), 0, 'the reloaded page caught up without a snapshot');
  await setClock(false); // the agent goes on from where it held

  // A second tab on the same thread: no checkpoint for it, and it says why.
  const second = await browser.newPage();
  await second.goto(page.url());
  await second.waitForFunction(() => window.__demo && window.__demo.sync, null, { timeout: 15000 });
  const other = await pageView(second);
  assert.equal(other.threadId, after.threadId);
  assert.deepEqual([other.persistence.restore, other.persistence.active, other.persistence.inactiveReason], ['skipped', false, 'locked']);
  assert.deepEqual(other.pending, [], 'it did not take the first tab\'s edit');
  await waitData(second, 'sync-persist', 'reason', 'locked', 5000);
  await second.close();

  // The run goes on: the pane heals and matches the agent.
  await page.getByTestId('interrupt').waitFor({ timeout: 60000 });
  await page.waitForFunction(() => window.__demo.finished.get() && document.querySelector('[data-testid="sync-match"]').dataset.state === 'match',
    null, { timeout: 30000 });
  const end = await pageView(page);
  assert.equal(end.status, 'synced');
  assert.deepEqual(end.pending.map((e) => e.editId), before.pending.map((e) => e.editId), 'still pending: it goes with the next run');
  // Later gaps under the faulty link are healed by the emitter's cheaper
  // catch-up: on a slow machine the page can fall far enough behind that a
  // snapshot is cheaper than the replay. Each snapshot the page took must be
  // one the server logged as such after the restore (the second tab's first
  // connection is one too, hence at most).
  const tookSnapshots = await page.evaluate(() => window.__demo.sync.metrics().snapshots);
  const laterSnapshots = (await truthOf(page, after.threadId)).connections.filter((c) => c.connNo > restoredConn.connNo && c.mode === 'snapshot');
  assert.ok(tookSnapshots <= laterSnapshots.length, `snapshots the page took (${tookSnapshots}) that the server never sent after the restore: ${JSON.stringify(laterSnapshots)}`);
  for (const e of end.timeline.filter((x) => x.status !== 'synced')) assert.equal(e.enabled, false, JSON.stringify(e));

  // The restored edit reaches the agent with the next run, once.
  await page.getByTestId('sync-continue').click();
  await waitData(page, 'sync-edit-status', 'status', 'acked', 20000);
  const acked = await truthOf(page, after.threadId);
  assert.equal(acked.limit, MINE);
  assert.deepEqual(acked.edits.map((r) => [r.editId, r.status]), [[before.pending[0].editId, 'applied']]);
  await page.screenshot({ path: path.join(ARTIFACTS, 'reload-final.png'), fullPage: true });

  // Tampered storage: the run is over (nothing writes any more); one byte of
  // the stored checkpoint changes; the next load discards it and says why.
  await page.getByTestId('interrupt').waitFor({ timeout: 20000 });
  await page.waitForFunction(() => window.__demo.finished.get() && !window.__demo.sync.persistence.behind, null, { timeout: 20000 });
  const tampered = await page.evaluate(tamperCheckpoint, `agui-demo:${after.threadId}`);
  assert.ok(tampered, 'the checkpoint was in IndexedDB');
  // The page's stream waits until it was read: what it starts from, not what the server sent it since.
  let readFresh;
  const freshRead = new Promise((resolve) => { readFresh = resolve; });
  await page.route('**/agent', async (route) => { await freshRead; await route.continue(); }, { times: 1 });
  await page.reload();
  await page.waitForFunction(() => window.__demo && window.__demo.sync, null, { timeout: 15000 });
  const fresh = await pageView(page);
  readFresh();
  assert.deepEqual([fresh.persistence.restore, fresh.persistence.error, fresh.persistence.active], ['discarded', 'invalid-checkpoint', true]);
  assert.deepEqual([fresh.lastSeq, fresh.pending], [null, []], 'it starts from nothing');
  await waitData(page, 'sync-persist', 'restore', 'discarded', 5000);
  const told = await page.evaluate(() => window.__demo.syncLog.get().map((e) => e.text).join('\n'));
  assert.match(told, /checkpoint discarded \(invalid-checkpoint\).*digest does not match/);
  await page.waitForFunction(() => document.querySelector('[data-testid="sync-match"]').dataset.state === 'match', null, { timeout: 20000 });
  t.diagnostic(`reload to restored page: ${reloadMs} ms; checkpoint at seq ${after.lastSeq} (page was at ${atUnload}); replay of ${restoredConn.events} events; ${before.persistence.writes} checkpoints written before it`);
  assert.deepEqual(pageErrors, [], 'the page logged errors');
});
