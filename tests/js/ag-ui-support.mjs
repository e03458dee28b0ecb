// Upstream AG-UI servers for tests/js/ag-ui.test.mjs, written the way backends
// write them: plain Node http servers that encode events with @ag-ui/encoder's
// EventEncoder. Not a test file itself.
import { createServer } from 'node:http';
import { AbstractAgent } from '@ag-ui/client';
import { EventEncoder } from '@ag-ui/encoder';
import { Observable } from 'rxjs';

/**
 * A POST endpoint: `handler({ input, req, res, encoder, index })` answers the
 * index-th request. Returns { url, requests: [{ headers, input }], close() }.
 */
export async function startServer(handler) {
  const requests = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    let input = null;
    try {
      input = JSON.parse(body);
    } catch {
      // not a RunAgentInput (an abort request, say): the handler decides
    }
    const index = requests.length;
    requests.push({ method: req.method, headers: req.headers, input });
    const encoder = new EventEncoder({ accept: req.headers.accept });
    try {
      await handler({ input, req, res, encoder, index });
    } catch (error) {
      res.destroy(error);
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    port,
    url: `http://127.0.0.1:${port}/agent`,
    requests,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(resolve);
    }),
  };
}

export function sseHead(res, encoder) {
  res.writeHead(200, { 'content-type': encoder.getContentType(), 'cache-control': 'no-store' });
}

/** Writes `events` and ends the response. */
export function writeAll(res, encoder, events) {
  sseHead(res, encoder);
  res.end(events.map((event) => encoder.encode(event)).join(''));
}

const started = (input) => ({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
const finished = (input, result) => ({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId, result });

function textMessage(messageId, text) {
  return [
    { type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId, delta: text.slice(0, 3) },
    { type: 'TEXT_MESSAGE_CONTENT', messageId, delta: text.slice(3) },
    { type: 'TEXT_MESSAGE_END', messageId },
  ];
}

function toolCall(toolCallId, parentMessageId) {
  return [
    { type: 'TOOL_CALL_START', toolCallId, toolCallName: 'lookup', parentMessageId },
    { type: 'TOOL_CALL_ARGS', toolCallId, delta: '{"q":' },
    { type: 'TOOL_CALL_ARGS', toolCallId, delta: '"x"}' },
    { type: 'TOOL_CALL_END', toolCallId },
    { type: 'TOOL_CALL_RESULT', messageId: `${toolCallId}-result`, toolCallId, content: 'found' },
  ];
}

/** The truth shape (a) ends at. */
export const DOCS_FINAL = { todos: [{ text: 'buy milk', done: true }, { text: 'walk dog', done: false }], title: 'Chores' };

/**
 * (a) The AG-UI docs' way: an unsequenced STATE_SNAPSHOT, then JSON Patch
 * deltas, text messages and a tool call. `corrupt`: the second delta replaces
 * a path that does not exist (a delta computed against the wrong base).
 */
export function docsEvents(input, { corrupt = false } = {}) {
  const replace = corrupt
    ? { op: 'replace', path: '/todos/5/done', value: true }
    : { op: 'replace', path: '/todos/0/done', value: true };
  return [
    started(input),
    { type: 'STATE_SNAPSHOT', snapshot: { todos: [{ text: 'buy milk', done: false }], title: '' } },
    { type: 'STATE_DELTA', delta: [{ op: 'add', path: '/todos/-', value: { text: 'walk dog', done: false } }] },
    { type: 'STATE_DELTA', delta: [replace] },
    ...textMessage('m1', 'Added two todos.'),
    ...toolCall('t1', 'm1'),
    { type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/title', value: 'Chores' }] },
    ...textMessage('m2', 'Done.'),
    finished(input, { count: 2 }),
  ];
}

/** (b) Snapshots only. */
export function snapshotEvents(input) {
  return [
    started(input),
    { type: 'STATE_SNAPSHOT', snapshot: { step: 1, log: ['a'] } },
    ...textMessage('s1', 'Working...'),
    { type: 'STATE_SNAPSHOT', snapshot: { step: 2, log: ['a', 'b'] } },
    { type: 'STATE_SNAPSHOT', snapshot: { step: 3, log: ['a', 'b', 'c'] } },
    finished(input, 'ok'),
  ];
}

/** (c) The seed article's backend: an unstamped snapshot, then deltas with top-level seq / base_seq from base_seq 0. */
export function seedArticleEvents(input) {
  const delta = (seq, ops) => ({ type: 'STATE_DELTA', delta: ops, seq, base_seq: seq - 1 });
  return [
    started(input),
    { type: 'STATE_SNAPSHOT', snapshot: { proposal: { payee: 'ACME', amount: 100 }, notes: [] } },
    delta(1, [{ op: 'replace', path: '/proposal/amount', value: 120 }]),
    ...textMessage('c1', 'Revised the amount.'),
    delta(2, [{ op: 'add', path: '/notes/-', value: 'checked' }]),
    delta(3, [{ op: 'replace', path: '/proposal/payee', value: 'ACME Ltd' }]),
    finished(input, { approved: false }),
  ];
}

/**
 * A scripted AG-UI agent for the sequenced server (d): each run starts from
 * RunAgentInput.state (as AG-UI agents do), announces it with a
 * STATE_SNAPSHOT, then every `stepMs` says a message and appends one item
 * (a delta) until there are `target` items.
 */
export const BRIEF = 'Collect the items one at a time and report each. '.repeat(8);

export class CounterAgent extends AbstractAgent {
  #target;
  #stepMs;
  #runs = 0;

  constructor({ target = 10, stepMs = 2 } = {}) {
    super({});
    this.#target = target;
    this.#stepMs = stepMs;
  }

  run(input) {
    const run = ++this.#runs;
    return new Observable((subscriber) => {
      const items = Array.isArray(input.state?.items) ? [...input.state.items] : [];
      subscriber.next(started(input));
      // A brief that never changes keeps the state big enough for deltas to beat snapshots.
      subscriber.next({ type: 'STATE_SNAPSHOT', snapshot: { brief: BRIEF, items: [...items], total: items.length } });
      let timer = null;
      const tick = () => {
        if (items.length >= this.#target) {
          subscriber.next(finished(input, { items: items.length }));
          subscriber.complete();
          return;
        }
        const n = items.length + 1;
        for (const event of textMessage(`run${run}-msg${n}`, `Adding item ${n}.`)) subscriber.next(event);
        items.push({ n, label: `item ${n}` });
        subscriber.next({ type: 'STATE_DELTA', delta: [{ op: 'add', path: '/items/-', value: items[n - 1] }, { op: 'replace', path: '/total', value: n }] });
        timer = setTimeout(tick, this.#stepMs);
      };
      timer = setTimeout(tick, this.#stepMs);
      return () => clearTimeout(timer);
    });
  }
}

/**
 * (d) A server whose agent is wrapped with sequenceState(): every POST runs the
 * agent through the middleware and streams what comes out; a client that goes
 * away unsubscribes the run. `history`: the emitter's state at every seq it
 * reached (JSON text), for invariant checks.
 */
export async function startSequencedServer(middleware, agent) {
  const history = new Map();
  const record = (threadId) => {
    const emitter = middleware.emitterFor(threadId);
    if (emitter && !history.has(emitter.seq)) history.set(emitter.seq, JSON.stringify(emitter.state));
  };
  const server = await startServer(({ input, res, encoder }) => {
    sseHead(res, encoder);
    const subscription = middleware.run(input, agent).subscribe({
      next: (event) => {
        record(input.threadId);
        res.write(encoder.encode(event));
      },
      error: () => res.destroy(),
      complete: () => res.end(),
    });
    res.on('close', () => subscription.unsubscribe());
  });
  return { ...server, history };
}

/** A subscriber that records what it is shown. */
export function recorder() {
  const seen = { types: [], runStarted: 0, stateChanges: 0, errors: [] };
  return {
    seen,
    subscriber: {
      onEvent: ({ event }) => {
        seen.types.push(event.type);
      },
      onRunStartedEvent: () => {
        seen.runStarted++;
      },
      onStateChanged: () => {
        seen.stateChanges++;
      },
      onRunFailed: ({ error }) => {
        seen.errors.push(error);
      },
    },
  };
}
