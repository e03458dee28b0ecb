// Attach in the demo (issue 26, item 3, "Chromium"), in headless Chromium over
// the demo's faulty link. The page is reloaded mid-run; while it is away the
// agent writes state and starts its next answer. The reloaded page attaches
// (GET /agent with X-AGUI-Attach, docs/wire.md section 8):
//  - its state comes back from its checkpoint and is caught up by a replay of
//    what it missed (the server's connection log says so), never a snapshot;
//  - the answer being streamed shows from its first word, and goes on
//    streaming after the reload to its last, as the agent says it;
// and a second page opened on the thread attaches to the same run: the same
// runId, the same messages, the same state as the agent.
// The agent's clock (POST /clock) holds it mid-answer while the pages look,
// so what "mid-answer" means does not depend on the machine's speed.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import { ARTIFACTS, launchChromium, startServer } from './e2e-support.mjs';
import { until } from '../support/until.mjs';

const FAULTS = { seed: 31, drop: 0.08, duplicate: 0.08, reorder: 0.1, latencyMs: 20, jitterMs: 30 };
const STEP_MS = 150;
const HOLD_AT_SEQ = 17; // the second day's draft; the agent's second answer comes after seq 20

// The agent's messages so far, from its log (GET /log): messageId -> { text, ended }.
async function agentMessages(base, threadId) {
  const text = await (await fetch(new URL(`/log?threadId=${threadId}`, base))).text();
  const out = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const event = JSON.parse(line);
    if (!event.type?.startsWith('TEXT_MESSAGE_')) continue;
    out[event.messageId] ??= { text: '', ended: false };
    if (event.type === 'TEXT_MESSAGE_CONTENT') out[event.messageId].text += event.delta;
    if (event.type === 'TEXT_MESSAGE_END') out[event.messageId].ended = true;
  }
  return out;
}

const pageMessages = (page) => page.evaluate(() => Object.fromEntries(window.__demo.transcript.get().messages.map((m) => [m.id, m.text])));
const pageRunId = (page, threadId) => page.evaluate((id) => JSON.parse(sessionStorage.getItem(`agui-demo-run:${id}`)).runId, threadId);

test('demo: a page reloaded mid-run attaches: its answer streams on from the first word, its state is replayed; a second page sees the same run', { timeout: 120000 }, async (t) => {
  const server = startServer({ faults: FAULTS, stepMs: STEP_MS });
  t.after(() => server.child.kill('SIGTERM'));
  const url = await server.url;
  const { browser, page, pageErrors } = await launchChromium(t, 'attach');
  const setClock = (paused) => fetch(new URL('/clock', url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ paused }) });

  await page.goto(url);
  await page.waitForFunction(() => window.__demo && window.__demo.threadId, null, { timeout: 15000 });
  const threadId = await page.evaluate(() => window.__demo.threadId);
  const truth = async () => (await fetch(new URL(`/truth?threadId=${threadId}`, url))).json();
  // Held in a stretch of state updates, a few beats before the agent's second
  // answer; the page takes in everything up to there and checkpoints it.
  await until(async () => (await truth()).seq >= HOLD_AT_SEQ, 'the agent to reach the stretch');
  await setClock(true);
  const heldAt = (await truth()).seq;
  await page.waitForFunction((seq) => window.__demo.sync.lastSeq === seq && window.__demo.sync.status === 'synced' && !window.__demo.sync.persistence.behind,
    heldAt, { timeout: 30000 });

  // The reloaded page's first request waits until the agent has gone on
  // (state the page missed) and is held in the middle of its next answer.
  let answer = null;
  await page.route('**/agent', async (route) => {
    try {
      answer = await holdMidAnswer(url, threadId, setClock, (tr) => tr.seq > heldAt);
    } finally {
      await route.continue();
    }
  }, { times: 1 });
  await page.reload();
  await page.waitForFunction(() => window.__demo && window.__demo.sync, null, { timeout: 15000 });
  assert.equal(await page.evaluate(() => window.__demo.threadId), threadId, 'the URL keeps the thread');
  await until(() => answer, 'the agent to be held mid-answer', 60000);

  // The answer so far, from its first word, though it began while the page was away.
  const said = (await agentMessages(url, threadId))[answer];
  assert.equal(said.ended, false, 'the answer is still being streamed');
  await page.waitForFunction(([id, text]) => window.__demo.transcript.get().messages.some((m) => m.id === id && m.text === text), [answer, said.text], { timeout: 20000 })
    .catch(async (e) => { throw new Error(`page messages ${JSON.stringify(await pageMessages(page))}, agent's ${answer}: ${JSON.stringify(said)}: ${e.message}`); });
  const reloaded = await pageMessages(page);
  const all = await agentMessages(url, threadId);
  for (const [id, m] of Object.entries(all)) assert.equal(reloaded[id], m.text, `message ${id} as the agent said it`);

  // The state: from the checkpoint, caught up by replay (the attach's own catch-up).
  let tr = await truth();
  const conn = tr.connections.find((c) => c.attached && c.reason === 'restored');
  assert.ok(conn, `the reloaded page attached from its checkpoint: ${JSON.stringify(tr.connections)}`);
  assert.equal(conn.mode, 'replay', JSON.stringify(conn));
  assert.ok(conn.events > 0, 'the agent had moved on while the page was away');
  await page.waitForFunction((seq) => window.__demo.sync.status === 'synced' && window.__demo.sync.lastSeq === seq, tr.seq, { timeout: 20000 });
  assert.equal(await page.evaluate(() => window.__demo.sync.metrics().snapshots), 0, 'no snapshot: a replay');
  assert.equal(await pageRunId(page, threadId), tr.runId, 'the page joined the run the agent is in');
  await page.screenshot({ path: path.join(ARTIFACTS, 'attach-reloaded.png'), fullPage: true });

  // A second page on the thread: the same run, the same messages, the same state.
  const second = await browser.newPage();
  second.on('pageerror', (e) => pageErrors.push(`second page: ${e.message}`));
  await second.goto(page.url());
  await second.waitForFunction(([id, text]) => window.__demo && window.__demo.transcript.get().messages.some((m) => m.id === id && m.text === text), [answer, said.text], { timeout: 20000 });
  assert.deepEqual(await pageMessages(second), reloaded);
  await second.waitForFunction(() => document.querySelector('[data-testid="sync-match"]')?.dataset.state === 'match', null, { timeout: 20000 });
  assert.equal(await pageRunId(second, threadId), tr.runId);
  tr = await truth();
  assert.ok(tr.connections.some((c) => c.attached && c.connNo > conn.connNo), JSON.stringify(tr.connections));

  // The agent goes on: the answer streams on, on both pages, to its last word.
  await setClock(false);
  await until(async () => (await agentMessages(url, threadId))[answer].ended, 'the answer to end');
  const full = (await agentMessages(url, threadId))[answer].text;
  assert.ok(full.length > said.text.length);
  for (const p of [page, second]) {
    await p.waitForFunction(([id, text]) => window.__demo.transcript.get().messages.some((m) => m.id === id && m.text === text), [answer, full], { timeout: 20000 });
  }

  // To the end of the run: both pages hold what the agent holds, and say the same.
  for (const p of [page, second]) {
    await p.getByTestId('interrupt').waitFor({ timeout: 60000 }).catch(async (e) => {
      const log = await p.evaluate(() => window.__demo.syncLog.get().slice(-12).map((x) => x.text));
      throw new Error(`${p === page ? 'reloaded' : 'second'} page: no interrupt; its log ${JSON.stringify(log)}; connections ${JSON.stringify((await truth()).connections)}: ${e.message}`);
    });
    await p.waitForFunction(() => window.__demo.finished.get() && document.querySelector('[data-testid="sync-match"]').dataset.state === 'match', null, { timeout: 30000 });
  }
  const final = await agentMessages(url, threadId);
  const expected = Object.fromEntries(Object.entries(final).map(([id, m]) => [id, m.text]));
  assert.deepEqual(await pageMessages(page), expected);
  assert.deepEqual(await pageMessages(second), expected);
  await page.screenshot({ path: path.join(ARTIFACTS, 'attach-final.png'), fullPage: true });
  assert.deepEqual(pageErrors, [], 'the pages logged errors');
});

// Lets the held agent go on until `enough(truth)` and it is in the middle of
// an answer (some of it said), then holds it there; the answer's messageId.
// A hold that lands before the answer's first word lets it go on a little;
// one that lands after its last word waits for the next answer.
async function holdMidAnswer(base, threadId, setClock, enough) {
  const truth = async () => (await fetch(new URL(`/truth?threadId=${threadId}`, base))).json();
  for (;;) {
    await setClock(false);
    const id = await until(async () => {
      const tr = await truth();
      return enough(tr) && tr.streaming;
    }, 'the agent to be mid-answer', 60000);
    await setClock(true);
    const held = await truth();
    const said = (await agentMessages(base, threadId))[id];
    if (held.streaming === id && said && !said.ended && said.text) return id;
  }
}
