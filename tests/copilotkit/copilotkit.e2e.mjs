// CopilotKit end to end (make copilotkit-test; part of make test). Proves that
// a StateSyncHttpAgent works where CopilotKit accepts an AG-UI agent instance:
// the `selfManagedAgents` prop of CopilotKitProvider (@copilotkit/react-core/v2;
// https://docs.copilotkit.ai/backend/self-managed-agents). A Vite-built React
// page renders the agent's state with useAgent() and starts one run with
// copilotkit.runAgent(); the agent's connections go through a TCP link that
// cuts the first ones mid-stream. The run must heal: the page ends `synced` and
// shows exactly the state the server's sequenceState() emitter holds, while
// CopilotKit saw one run (one RUN_STARTED, one RUN_FINISHED, no failure), the
// page made no request off 127.0.0.1, and raised no error. Screenshot: tests/artifacts/copilotkit.png.
import assert from 'node:assert/strict';
import { createReadStream, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AbstractAgent } from '@ag-ui/client';
import { EventEncoder } from '@ag-ui/encoder';
import { sequenceState } from 'agui-state-sync/ag-ui';
import { chromium } from 'playwright-core';
import { Observable } from 'rxjs';
import { build } from 'vite';
import { startFaultLink } from '../support/fault-link.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ARTIFACTS = path.join(HERE, '..', 'artifacts');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];

// The agent: each run continues from RunAgentInput.state (as AG-UI agents do),
// says a message and revises the proposal once per step until the counter
// reaches TARGET. Its final state is a pure function of TARGET.
const TARGET = 30;
const STEP_MS = 10;
const RECIPIENTS = ['ACME Corp', 'Initech LLC', 'Globex GmbH', 'Umbrella plc', 'Hooli Inc', 'Vandelay Industries'];
const proposalAt = (n) => ({ recipient: RECIPIENTS[Math.floor(n / 6) % RECIPIENTS.length], amount: 1000 + 125 * n });
// Terms that never change keep the state bigger than a step's delta, so the
// server's emitter sends deltas (it sends a snapshot when that is smaller).
const TERMS = 'Payment within 30 days of invoice; amounts in EUR, VAT excluded; the agent may revise the amount and the recipient until a person approves. '.repeat(3);
const stateAt = (n) => ({ proposal: { ...proposalAt(n), terms: TERMS }, counter: n });
const FINAL = stateAt(TARGET); // proposal: { recipient: 'Vandelay Industries', amount: 4750, terms }, counter: 30

// The fault plan: agent connection i is cut after CUTS[i] bytes of the
// response (HTTP head included); later connections are not cut. Every cut
// lands mid-run (a whole run is ~20 kB), so the number of cuts is exact.
const CUTS = [2000, 4500, 3200];

class ProposalAgent extends AbstractAgent {
  #runs = 0;

  run(input) {
    const run = ++this.#runs;
    return new Observable((subscriber) => {
      const from = input.state;
      let n = Number.isSafeInteger(from?.counter) && from?.proposal ? from.counter : 0;
      subscriber.next({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
      subscriber.next({ type: 'STATE_SNAPSHOT', snapshot: n > 0 ? from : stateAt(0) });
      let timer = null;
      const step = () => {
        if (n >= TARGET) {
          subscriber.next({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId, result: { counter: n } });
          subscriber.complete();
          return;
        }
        n++;
        const messageId = `run${run}-step${n}`;
        subscriber.next({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' });
        subscriber.next({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: `Revising the proposal, ` });
        subscriber.next({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: `step ${n}.` });
        subscriber.next({ type: 'TEXT_MESSAGE_END', messageId });
        const before = proposalAt(n - 1);
        const next = proposalAt(n);
        const delta = [{ op: 'test', path: '/counter', value: n - 1 }, { op: 'replace', path: '/counter', value: n },
          { op: 'replace', path: '/proposal/amount', value: next.amount }];
        if (next.recipient !== before.recipient) delta.push({ op: 'replace', path: '/proposal/recipient', value: next.recipient });
        subscriber.next({ type: 'STATE_DELTA', delta });
        timer = setTimeout(step, STEP_MS);
      };
      timer = setTimeout(step, STEP_MS);
      return () => clearTimeout(timer);
    });
  }
}

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm',
  '.woff2': 'font/woff2', '.woff': 'font/woff', '.ttf': 'font/ttf', '.svg': 'image/svg+xml' };

// The built page. `connection: close`: no socket of the page load is reused
// for the agent's requests, so each agent request opens a connection of its own
// (the link decides a connection's faults when it accepts it).
function serveStatic(res, dist, pathname) {
  const file = path.join(dist, path.normalize(pathname === '/' ? '/index.html' : pathname));
  let found = false;
  try {
    found = file.startsWith(dist + path.sep) && statSync(file).isFile();
  } catch {
    // missing
  }
  if (!found) {
    res.writeHead(404, { connection: 'close' });
    res.end();
    return;
  }
  res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', connection: 'close' });
  createReadStream(file).pipe(res);
}

// One http server on 127.0.0.1: POST /agent goes to `agent(input, req, res,
// encoder)`, anything else is a file of the built page.
async function startAppServer(dist, agent) {
  const server = createServer(async (req, res) => {
    const { pathname } = new URL(req.url, 'http://127.0.0.1');
    if (req.method !== 'POST' || pathname !== '/agent') return serveStatic(res, dist, pathname);
    let body = '';
    for await (const chunk of req) body += chunk;
    let input;
    try {
      input = JSON.parse(body);
    } catch {
      res.writeHead(400).end();
      return;
    }
    agent(input, req, res, new EventEncoder({ accept: req.headers.accept }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

test('CopilotKit selfManagedAgents: a StateSyncHttpAgent heals its state after cut connections within one run', { timeout: 120000 }, async (t) => {
  const cleanup = [];
  t.after(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => {});
  });

  // 1. The page, built the way an app builds it (this folder's vite.config.mjs).
  const dist = mkdtempSync(path.join(tmpdir(), 'agui-copilotkit-dist-'));
  cleanup.push(async () => rmSync(dist, { recursive: true, force: true }));
  const t0 = Date.now();
  await build({ root: HERE, configFile: path.join(HERE, 'vite.config.mjs'), build: { outDir: dist }, logLevel: 'warn' });
  const built = Date.now();

  // 2. One server: the page and POST /agent (the agent's events through sequenceState()).
  const middleware = sequenceState();
  cleanup.push(async () => middleware.dispose());
  const agent = new ProposalAgent();
  let link = null;
  const agentRequests = [];
  const server = await startAppServer(dist, (input, req, res, encoder) => {
    const index = agentRequests.length;
    agentRequests.push({ headers: req.headers, input });
    // This request's connection was accepted with its faults already; the next one (the reconnect) gets these.
    link.setFaults(index + 1 < CUTS.length ? { cutAfterBytes: [CUTS[index + 1], CUTS[index + 1]] } : { cutProbability: 0 });
    res.writeHead(200, { 'content-type': encoder.getContentType(), 'cache-control': 'no-store' });
    const subscription = middleware.run(input, agent).subscribe({
      next: (event) => res.write(encoder.encode(event)),
      error: () => res.destroy(),
      complete: () => res.end(),
    });
    res.on('close', () => subscription.unsubscribe());
  });
  cleanup.push(() => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(resolve);
  }));

  // 3. The faulty link in front of the whole origin; no faults while the page loads.
  link = await startFaultLink({ target: { host: '127.0.0.1', port: server.address().port }, seed: 13, cutProbability: 0 });
  cleanup.push(() => link.close());
  const origin = `127.0.0.1:${link.port}`;

  // 4. Chromium.
  const profile = mkdtempSync(path.join(tmpdir(), 'agui-copilotkit-chromium-'));
  cleanup.push(async () => rmSync(profile, { recursive: true, force: true }));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, viewport: { width: 760, height: 440 },
  });
  cleanup.push(() => browser.close());
  const page = browser.pages()[0] ?? (await browser.newPage());
  const pageErrors = [];
  const consoleErrors = [];
  const offHost = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol) && url.host !== origin) offHost.push(request.url());
  });

  await page.goto(link.url('/'));
  await page.getByTestId('status').waitFor({ timeout: 20000 });
  assert.equal(await page.getByTestId('same').textContent(), 'true', 'useAgent() returned another instance than the one given to selfManagedAgents');
  assert.equal(await page.getByTestId('counter').textContent(), '—');

  // 5. Run through CopilotKit, with the agent's first connections cut. Idle
  // sockets from the page load (accepted without faults) are closed first, so
  // the agent's first request opens a connection under the plan.
  server.closeIdleConnections();
  link.setFaults({ cutProbability: 1, cutAfterBytes: [CUTS[0], CUTS[0]] });
  const clicked = Date.now();
  await page.getByTestId('run').click();
  await page.waitForFunction(() => !['idle', 'running'].includes(window.__e2e.seen.outcome), null, { timeout: 30000 });
  await page.waitForFunction(() => document.querySelector('[data-testid="outcome"]').textContent !== 'running', null, { timeout: 5000 });
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'copilotkit.png'), fullPage: true });

  const seen = await page.evaluate(() => window.__e2e.seen);
  t.diagnostic(`build ${built - t0} ms, page load ${clicked - built} ms, run ${Date.now() - clicked} ms; `
    + `link ${JSON.stringify(link.stats)}; reconnected at counter ${seen.reconnectedAt.join(', ')}`);
  assert.equal(seen.outcome, 'finished', `copilotkit.runAgent() did not finish: ${seen.error}`);
  assert.equal(seen.error, null);

  // The connection was cut, as planned, and the agent reconnected with its position.
  assert.equal(link.stats.cuts, CUTS.length, `link stats: ${JSON.stringify(link.stats)}`);
  assert.equal(agentRequests.length, CUTS.length + 1);
  assert.equal(seen.connections, CUTS.length + 1);
  assert.equal(seen.retries, CUTS.length);
  // Where each cut left the page varies by a step between runs (the last bytes
  // before an abrupt close may never reach the page's script), never the outcome.
  // Each reconnect continues from the page's state: it never goes back.
  assert.equal(seen.reconnectedAt.length, CUTS.length);
  for (const [i, counter] of seen.reconnectedAt.entries()) {
    assert.ok(counter >= (seen.reconnectedAt[i - 1] ?? 0) && counter < TARGET, `reconnected at counter ${seen.reconnectedAt}`);
  }
  for (const { headers, input } of agentRequests.slice(1)) {
    assert.match(headers['x-agui-state-seq'] ?? '', /^\d+$/, 'a reconnect without X-AGUI-State-Seq');
    assert.equal(typeof input.forwardedProps?.stateSync, 'object');
  }

  // CopilotKit saw one run, although the server started (and stamped) CUTS.length + 1.
  assert.equal(seen.copilotkitRuns, 1, 'CopilotKit onAgentRunStarted');
  assert.equal(seen.runStarted, 1, 'RUN_STARTED events through the agent pipeline');
  assert.equal(seen.runFinished, 1);
  assert.equal(seen.runFailed, 0);

  // Healed: synced, and what the page shows is what the server holds.
  const threadId = agentRequests[0].input.threadId;
  const truth = middleware.emitterFor(threadId).state;
  assert.deepEqual(truth, FINAL);
  assert.equal(await page.getByTestId('status').getAttribute('data-status'), 'synced');
  assert.equal(await page.getByTestId('recipient').textContent(), truth.proposal.recipient);
  assert.equal(await page.getByTestId('amount').textContent(), String(truth.proposal.amount));
  assert.equal(await page.getByTestId('counter').textContent(), String(truth.counter));
  assert.deepEqual(JSON.parse(await page.getByTestId('state-json').textContent()), truth);
  assert.equal(await page.getByTestId('last-seq').textContent(), String(middleware.emitterFor(threadId).seq));
  const inPage = await page.evaluate(() => ({ state: window.__e2e.agent.state, same: window.__e2e.agent.state === window.__e2e.agent.stateSync.state }));
  assert.deepEqual(inPage.state, truth);
  assert.equal(inPage.same, true, 'agent.state is not the engine\'s state object');

  // No cloud calls, no errors.
  assert.deepEqual(offHost, [], 'requests off 127.0.0.1');
  // None tolerated. (@ag-ui/client 1.0.0's runHttpRequest leaves an unhandled
  // 'network error' rejection behind when a connection is cut under it, as with
  // an HttpAgent subclass that heals through super.run(); StateSyncHttpAgent
  // reads the response itself, so that must not happen here either.)
  assert.deepEqual(pageErrors, [], 'page errors');
  // Chromium logs each response the link broke off (mid-body, chunked), and nothing else.
  const cutLog = 'Failed to load resource: net::ERR_INCOMPLETE_CHUNKED_ENCODING';
  assert.deepEqual(consoleErrors, CUTS.map(() => cutLog), 'console errors');
});
