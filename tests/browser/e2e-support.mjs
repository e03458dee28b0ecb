// What the demo's Chromium e2e tests share: the demo server started as a
// user starts it (a child process, a fault schedule from the command line),
// a headless Debian chromium with its own profile, and page helpers.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEMO = path.join(ROOT, 'demo');
export const ARTIFACTS = path.join(ROOT, 'tests', 'artifacts');
const require = createRequire(path.join(DEMO, 'package.json'));
const { chromium } = require('playwright-core');

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

/** `node server/server.mjs` with `faults` ({ seed, drop, duplicate, reorder, latencyMs, jitterMs }) and `stepMs`; `url` resolves once it listens. */
export function startServer({ faults, stepMs }) {
  const args = ['server/server.mjs', '--port', '0', '--host', '127.0.0.1', '--step-ms', String(stepMs),
    '--seed', String(faults.seed), '--drop', String(faults.drop), '--duplicate', String(faults.duplicate),
    '--reorder', String(faults.reorder), '--latency-ms', String(faults.latencyMs), '--jitter-ms', String(faults.jitterMs)];
  const child = spawn(process.execPath, args, { cwd: DEMO, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 15000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /demo: (http:\/\/\S+)/.exec(out);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.stderr.on('data', (d) => { out += d; });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}):\n${out}`)); });
  });
  return { child, url, log: () => out };
}

/**
 * A headless chromium with a fresh profile (removed after the test `t`) and
 * its first page; `pageErrors` collects the page's uncaught errors and console errors.
 */
export async function launchChromium(t, name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const profile = mkdtempSync(path.join(tmpdir(), `agui-${name}-chromium-`));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 1500 },
  });
  t.after(async () => { await browser.close(); rmSync(profile, { recursive: true, force: true }); });
  const page = browser.pages()[0] || (await browser.newPage());
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
  return { browser, page, pageErrors };
}

export const truthOf = (page, threadId) => page.evaluate(async (id) => (await fetch(`/truth?threadId=${id}`)).json(), threadId);
export const dataOf = (page, testid, key) => page.evaluate(([id, k]) => {
  const el = document.querySelector(`[data-testid="${id}"]`);
  return el ? el.dataset[k] : undefined;
}, [testid, key]);
export const waitData = (page, testid, key, value, timeout) => page.waitForFunction(([id, k, v]) => {
  const el = document.querySelector(`[data-testid="${id}"]`);
  return el && el.dataset[k] === v;
}, [testid, key, value], { timeout });
export const eur = (n) => `${n.toLocaleString('en-US')} EUR`;
