// Two Node writer kinds of the writers' fleet (tests/python/test_writers_fleet.py),
// in one process for every thread of a run, on the Python writers' redis-server,
// key prefix and thread keys:
//   - a store-bound sequenceState() (the /ag-ui entry) in front of a
//     snapshot-only agent that owns q/qList: one long run per thread, whose
//     client sends state INITIAL and stateSync {lastSeq: null, epoch: null};
//     the agent's view starts at INITIAL and only ever holds its own writes;
//   - a store-bound createStateSyncProxy() (the /proxy entry, served on a real
//     socket here) in front of a STATEFUL snapshot-only HTTP upstream that
//     owns x/xList: one run per write, each client POSTing state INITIAL; the
//     upstream takes its first view of a thread from the RunAgentInput's state
//     and keeps it between runs, so each snapshot is stale about the others.
// The proxy binds a thread's emitter to key = threadId in its store
// (proxy/thread.js), as the Python writers' redis_store(url, prefix=...) does:
// with the same url and prefix every writer lands on <prefix>v2:{t:<threadId>}.
//
// Protocol: one JSON line per command on stdin, one per answer on stdout;
// commands carry an id and run concurrently (writers of one thread race),
// answers carry the id and come when the command is done:
//   argv: <ag-ui entry URL> <proxy entry URL> <server entry URL> <redis url> <prefix> <initial state JSON>
//   {id, op: 'open', thread}          the sequenceState() run starts; answered after its catch-up
//   {id, op: 'sequence', thread, n}   the agent sends q = n; answered once the run sent its state event(s) for it
//   {id, op: 'finish', thread}        the agent ends its run; answered when the run has completed
//   {id, op: 'proxy', thread}         one run through the proxy (its upstream sends x + 1); answered at its end
//   {op: 'close'}                     everything is freed (a command still under way is not answered), the process exits
//   answers: {id, ok: true, events} | {id, ok: false, code, message}; first line {ready: true}.
// Nothing here waits on a clock: each answer waits for the event it names; the
// Python side holds the deadline.
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { Observable } from 'rxjs';

const [agUiEntry, proxyEntry, serverEntry, url, prefix, initialJson] = process.argv.slice(2);
const [{ sequenceState }, { createStateSyncProxy }, { redisStore }] = await Promise.all(
  [agUiEntry, proxyEntry, serverEntry].map((entry) => import(entry)));
const INITIAL = JSON.parse(initialJson);
const say = (answer) => process.stdout.write(`${JSON.stringify(answer)}\n`);
const isState = (event) => event?.type === 'STATE_SNAPSHOT' || event?.type === 'STATE_DELTA';

/** One more write of `field` on a writer's own view: n, appended to its list; a copy to send. */
function advance(view, field, n) {
  view[field] = n;
  view[`${field}List`].push(n);
  return structuredClone(view);
}

/** What a run has sent so far, and a way to wait until it has sent something, or ended. */
class Seen {
  events = [];
  ended = false;
  error = null;
  #waiters = new Set();

  push(event) {
    this.events.push(event);
    this.#wake();
  }

  end(error = null) {
    this.ended = true;
    this.error = error;
    this.#wake();
  }

  /** Resolves once `condition()` holds; rejects if the run ended (or failed) first. */
  until(condition, what) {
    return new Promise((resolve, reject) => {
      // True once settled: the waiter is then dropped.
      const settled = () => {
        if (condition()) resolve();
        else if (this.ended) reject(this.error ?? new Error(`the run ended before ${what()}`));
        else return false;
        return true;
      };
      if (settled()) return;
      const waiter = () => {
        if (settled()) this.#waiters.delete(waiter);
      };
      this.#waiters.add(waiter);
    });
  }

  #wake() {
    for (const waiter of [...this.#waiters]) waiter();
  }
}

// --- the sequenceState() writer --------------------------------------------------------------

const middlewareStore = redisStore({ url, prefix });
const middleware = sequenceState({ store: middlewareStore });
const sequenced = new Map(); // thread -> { view (the agent's), subscriber, input, seen, base (the catch-up's state events) }

/** The snapshot-only agent behind sequenceState(): its run stays open, the test releases each snapshot. */
function agentFor(entry) {
  return {
    run: (input) => new Observable((subscriber) => {
      entry.subscriber = subscriber;
      entry.input = input;
      subscriber.next({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
    }),
  };
}

const stateCount = (seen) => seen.events.filter(isState).length;

async function open({ thread }) {
  const entry = { view: structuredClone(INITIAL), subscriber: null, input: null, seen: new Seen(), base: 0 };
  sequenced.set(thread, entry);
  const input = {
    threadId: thread, runId: `${thread}-q`, state: INITIAL, messages: [], tools: [], context: [],
    forwardedProps: { stateSync: { lastSeq: null, epoch: null } },
  };
  middleware.run(input, agentFor(entry)).subscribe({
    next: (event) => entry.seen.push(event),
    error: (error) => entry.seen.end(error),
    complete: () => entry.seen.end(),
  });
  // The catch-up (a client that holds nothing gets the thread's state) follows RUN_STARTED.
  await entry.seen.until(() => entry.subscriber !== null && stateCount(entry.seen) > 0, () => `${thread}: the catch-up`);
  entry.base = stateCount(entry.seen);
  return { events: entry.seen.events.slice() };
}

async function sequence({ thread, n }) {
  const entry = sequenced.get(thread);
  const from = entry.seen.events.length;
  entry.subscriber.next({ type: 'STATE_SNAPSHOT', snapshot: advance(entry.view, 'q', n) });
  // One committed state event per snapshot (the core rebases it onto the thread as one change).
  await entry.seen.until(() => stateCount(entry.seen) >= entry.base + n, () => `${thread}: q=${n}'s state event`);
  return { events: entry.seen.events.slice(from) };
}

async function finish({ thread }) {
  const entry = sequenced.get(thread);
  const from = entry.seen.events.length;
  entry.subscriber.next({ type: 'RUN_FINISHED', threadId: thread, runId: entry.input.runId });
  entry.subscriber.complete();
  await entry.seen.until(() => entry.seen.ended && entry.seen.error === null, () => `${thread}: the run's end`);
  return { events: entry.seen.events.slice(from) };
}

// --- the proxy writer ------------------------------------------------------------------------

const upstreamViews = new Map(); // thread -> the upstream's own view of it

/** A stateful snapshot-only upstream: per run, RUN_STARTED, one snapshot of its view with x advanced, RUN_FINISHED. */
function upstreamHandler(req, res) {
  let body = '';
  req.on('data', (chunk) => { body += chunk; });
  req.on('end', () => {
    const input = JSON.parse(body);
    if (!upstreamViews.has(input.threadId)) upstreamViews.set(input.threadId, structuredClone(input.state ?? INITIAL));
    const view = upstreamViews.get(input.threadId);
    const frame = (event) => `data: ${JSON.stringify(event)}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(frame({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId }));
    res.write(frame({ type: 'STATE_SNAPSHOT', snapshot: advance(view, 'x', view.x + 1) }));
    res.end(frame({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId }));
  });
}

/** Serves `handler` on a free 127.0.0.1 port: { url, close() }. */
async function serve(handler) {
  const server = createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/agent`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

const upstream = await serve(upstreamHandler);
const proxyStore = redisStore({ url, prefix });
const proxy = createStateSyncProxy({ upstream: upstream.url, store: proxyStore });
const proxyServer = await serve(proxy);
const proxyRuns = new Map(); // thread -> runs started, for unique runIds

/** The data of each complete SSE event in `text`, parsed; the rest (an incomplete event) is left. */
function takeEvents(text, events) {
  let i;
  while ((i = text.indexOf('\n\n')) >= 0) {
    const data = text.slice(0, i).split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
    if (data) events.push(JSON.parse(data));
    text = text.slice(i + 2);
  }
  return text;
}

async function proxyRun({ thread }) {
  const k = (proxyRuns.get(thread) ?? 0) + 1;
  proxyRuns.set(thread, k);
  const input = {
    threadId: thread, runId: `${thread}-x${k}`, state: INITIAL, messages: [], tools: [], context: [],
    forwardedProps: { stateSync: { lastSeq: null, epoch: null } },
  };
  const res = await fetch(proxyServer.url, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify(input),
  });
  if (res.status !== 200) throw new Error(`${thread}: the proxy answered ${res.status}: ${await res.text()}`);
  const events = [];
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of res.body) text = takeEvents(text + decoder.decode(chunk, { stream: true }), events);
  const last = events.at(-1);
  if (last?.type !== 'RUN_FINISHED') throw new Error(`${thread}: run ${input.runId} did not finish: ${JSON.stringify(events)}`);
  return { events };
}

// --- the commands ----------------------------------------------------------------------------

const ops = { open, sequence, finish, proxy: proxyRun };

async function answer(command) {
  try {
    say({ id: command.id, ok: true, ...(await ops[command.op](command)) });
  } catch (error) {
    say({ id: command.id, ok: false, code: error?.code ?? null, message: String(error?.stack ?? error) });
  }
}

say({ ready: true });
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if (command.op === 'close') break;
  answer(command); // not awaited: the writers of a thread race (answer() never throws)
}
// Closed: every writer freed. A command still under way (only when the test failed) is not answered.
middleware.dispose();
proxy.close();
await proxyServer.close();
await upstream.close();
await Promise.all([middlewareStore.close(), proxyStore.close()]);
