// Shared set-up of the framework suites (not a test file): the Python
// framework servers (serve.py) as child processes on 127.0.0.1, the Node
// proxy CLI in front of one, the framework's own truth (tap.py: what it
// received and sent, byte for byte, its own state, its effect counter), and
// clients that count the bytes they receive. Nothing here sleeps: every wait
// is for a line, an exit or a condition, with a deadline.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastJsonPatch from 'fast-json-patch';

export const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..');
/** The venv `make frameworks-test` builds (tests/frameworks/requirements.lock + this package). */
export const python = process.env.AGUI_FRAMEWORKS_PYTHON ?? join(repoRoot, 'build', 'venv-frameworks', 'bin', 'python');
if (!existsSync(python)) throw new Error(`${python} is missing: run \`make frameworks-test\` (it builds the venv)`);
/** CrewAI pins another FastAPI: its venv of its own (tests/frameworks/crewai-requirements.lock). */
export const crewaiPython = process.env.AGUI_CREWAI_PYTHON ?? join(repoRoot, 'build', 'venv-crewai', 'bin', 'python');
const PROXY_BIN = join(repoRoot, 'js', 'bin', 'agui-state-sync-proxy.js');
const DEADLINE_MS = 180000; // start-up of a Python framework app: a cold CrewAI import on a busy machine takes a minute

/**
 * Spawns `command args`, resolves with { child, url, output(), stop() } once
 * its output says where it listens (`pattern`'s group 1: "listening on URL",
 * or uvicorn's "Uvicorn running on URL" on stderr).
 */
function startListening(command, args, what, pattern = /listening on (http:\/\/\S+)/) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: repoRoot });
  let out = '';
  const exited = new Promise((done) => child.on('exit', (code, signal) => done(code ?? signal)));
  const url = new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${what} did not listen within ${DEADLINE_MS} ms:\n${out}`)), DEADLINE_MS);
    const read = (chunk) => {
      out += chunk;
      const match = pattern.exec(out);
      if (match) {
        clearTimeout(timer);
        done(match[1]);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`${what} exited (${code}) before listening:\n${out}`));
    });
  });
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  return url.then((u) => ({ child, url: u, output: () => out, stop }), async (error) => {
    await stop();
    throw error;
  });
}

/**
 * A framework app (serve.py: 'langgraph' | 'pydantic-snapshot' | 'pydantic-delta' | 'crewai'),
 * unchanged (wrap 'none') or with StateSyncMiddleware ('middleware'). Returns
 * { url (the AG-UI endpoint), port, truth(threadId), hold(threadId, on), stop() }.
 */
export async function startFramework(app, wrap) {
  const interpreter = app === 'crewai' ? crewaiPython : python;
  const server = await startListening(interpreter, [join(here, 'serve.py'), app, '--wrap', wrap, '--port', '0'], `serve.py ${app}`);
  const base = new URL(server.url);
  return {
    ...server,
    port: Number(base.port),
    async truth(threadId) {
      const response = await fetch(new URL(`/_truth?threadId=${encodeURIComponent(threadId)}`, base));
      if (!response.ok) throw new Error(`/_truth answered ${response.status}`);
      return response.json();
    },
    /** LangGraph: holds (on) or releases the thread's effect (langgraph_app.hold), straight at the framework. */
    async hold(threadId, on) {
      const response = await fetch(new URL(`/_hold?threadId=${encodeURIComponent(threadId)}&on=${on ? 1 : 0}`, base), { method: 'POST' });
      if (response.status !== 204) throw new Error(`/_hold answered ${response.status}`);
    },
  };
}

/**
 * An example (examples/<folder>/app.py) as its README runs it: uvicorn on
 * 127.0.0.1, `app` ('app': with StateSyncMiddleware, 'unchanged': without).
 * Returns { url (its /agent), port, stop() }.
 */
export async function startExample(folder, app) {
  const args = ['-m', 'uvicorn', '--app-dir', join(repoRoot, 'examples', folder), `app:${app}`, '--host', '127.0.0.1', '--port', '0'];
  const server = await startListening(python, args, `uvicorn examples/${folder} app:${app}`, /Uvicorn running on (http:\/\/[\d.:]+)/);
  const url = new URL('/agent', server.url).href;
  return { ...server, url, port: Number(new URL(url).port) };
}

/** The proxy CLI (js/bin/agui-state-sync-proxy.js) in front of `upstream`: { url, port, stop() }. */
export async function startProxy(upstream) {
  const proxy = await startListening(process.execPath, [PROXY_BIN, '--upstream', upstream, '--port', '0'], 'agui-state-sync-proxy');
  const url = new URL('agent', proxy.url).href;
  return { ...proxy, url, port: Number(new URL(url).port) };
}

/** The data of each complete SSE event of `text`, parsed (comments and ids skipped). */
export function sseEvents(text) {
  const events = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block.split(/\r?\n/).filter((line) => line.startsWith('data:')).map((line) => line.slice(5).replace(/^ /, ''));
    if (data.length > 0) events.push(JSON.parse(data.join('\n')));
  }
  return events;
}

/**
 * Every state the framework said it held, in order, over all its runs of a
 * thread (truth.runs): each run starts from the RunAgentInput.state it got; a
 * STATE_SNAPSHOT replaces it, a STATE_DELTA is applied with fast-json-patch
 * (an implementation independent of ours).
 */
export function frameworkStates(truth) {
  const states = [];
  for (const run of truth.runs) {
    let state = structuredClone(run.input.state ?? {});
    states.push(state);
    for (const event of sseEvents(run.text)) {
      if (event.type === 'STATE_SNAPSHOT') state = structuredClone(event.snapshot);
      else if (event.type === 'STATE_DELTA') state = fastJsonPatch.applyPatch(structuredClone(state), event.delta, true, false).newDocument;
      else continue;
      states.push(state);
    }
  }
  return states;
}

/** The chat text of events, per message in order of first appearance: [[messageId, text]]. */
export function chatText(events) {
  const texts = new Map();
  for (const event of events) {
    if (event.type !== 'TEXT_MESSAGE_CONTENT') continue;
    texts.set(event.messageId, (texts.get(event.messageId) ?? '') + event.delta);
  }
  return [...texts.entries()];
}

/**
 * The platform fetch, counting the response body bytes that arrive (log.bytes)
 * and the requests (log.requests). endOnCut: a body that breaks (the link cut
 * it) just ends, and log.cuts counts it: the control's HttpAgent otherwise
 * leaves an unhandled rejection of undici's behind (seen with @ag-ui/client 1.0).
 */
export function countingFetch(log, { endOnCut = false } = {}) {
  return async (url, init) => {
    log.requests++;
    const body = [];
    (log.bodies ??= []).push(body); // each response's chunks, for captures
    const response = await fetch(url, init);
    if (!response.body) return response;
    const reader = response.body.getReader();
    const counted = new ReadableStream({
      async pull(controller) {
        let chunk;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (!endOnCut) throw error;
          log.cuts = (log.cuts ?? 0) + 1;
          chunk = { done: true };
        }
        if (chunk.done) return controller.close();
        log.bytes += chunk.value.byteLength;
        body.push(Buffer.from(chunk.value));
        controller.enqueue(chunk.value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** ag-ui-validate (PyPI, in the venv) on an SSE capture file: { status, report } (--json). */
export function validateCapture(file) {
  const bin = join(dirname(python), 'ag-ui-validate');
  const run = spawnSync(bin, ['--json', file], { encoding: 'utf8' });
  let report = null;
  try {
    report = JSON.parse(run.stdout);
  } catch {
    report = { raw: run.stdout, stderr: run.stderr };
  }
  return { status: run.status, report };
}
