// The upstream of bench_fleet.mjs, in its own process (forked by it): a plain
// AG-UI agent (the real @ag-ui/encoder) whose runs stream until the bench says
// finish. Every `intervalMs` each run sends one STATE_DELTA (the counter, and
// /t: the send time) and one TEXT_MESSAGE_CONTENT whose text is the send time,
// so a client far away measures delivery latency on one clock: the monotonic
// clock (process.hrtime), the same for every process on the machine.
// IPC: { cmd: 'count' } -> { events } sent so far (of threads not named
// 'direct-...': those runs are read with no proxy, for the floor); { cmd: 'finish' } -> every
// run ends (a last delta with done: true, TEXT_MESSAGE_END, RUN_FINISHED) and
// the answer is { finals: { threadId: { state, text } } }.
import { createServer } from 'node:http';
import { EventEncoder } from '@ag-ui/encoder';

/** The monotonic clock in µs (an integer, so it travels in JSON exactly). */
export function nowUs() {
  return Number(process.hrtime.bigint() / 1000n);
}

// A brief of 4 KB, so that a change is sent as a delta (the emitter sends a
// snapshot instead when the state is smaller than the delta).
const INITIAL = { title: 'fleet', brief: 'Plan the team offsite: venue, flights, dinner, budget. '.repeat(75), counter: 0, t: 0, done: false };

export async function upstreamChild(intervalMs) {
  const runs = new Map(); // threadId -> { state, text, send, end, timer }
  let events = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      const input = JSON.parse(body);
      runs.set(input.threadId, startRun(input, req, res));
    });
  });

  function startRun(input, req, res) {
    const encoder = new EventEncoder({ accept: req.headers.accept });
    res.writeHead(200, { 'content-type': encoder.getContentType(), 'cache-control': 'no-cache' });
    const run = { state: { ...INITIAL }, text: '', messageId: `m-${input.runId}` };
    const proxied = !input.threadId.startsWith('direct-');
    run.send = (event) => {
      if (proxied) events++;
      res.write(encoder.encode(event));
    };
    run.end = () => res.end();
    run.send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
    run.send({ type: 'STATE_SNAPSHOT', snapshot: run.state });
    run.send({ type: 'TEXT_MESSAGE_START', messageId: run.messageId, role: 'assistant' });
    run.finish = () => finishRun(run, input);
    run.timer = setInterval(() => beat(run), intervalMs);
    return run;
  }

  process.on('message', (message) => {
    if (message.cmd === 'count') process.send({ events });
    if (message.cmd !== 'finish') return;
    const finals = {};
    for (const [threadId, run] of runs) {
      run.finish();
      finals[threadId] = { state: run.state, text: run.text };
    }
    process.send({ finals });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.send({ port: server.address().port });
}

// One beat of a run: a state delta and a chunk of chat text, both stamped now.
function beat(run) {
  const t = nowUs();
  const counter = run.state.counter + 1;
  run.state = { ...run.state, counter, t };
  run.send({ type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/counter', value: counter }, { op: 'replace', path: '/t', value: t }] });
  const chunk = `${t} `;
  run.text += chunk;
  run.send({ type: 'TEXT_MESSAGE_CONTENT', messageId: run.messageId, delta: chunk });
}

function finishRun(run, input) {
  clearInterval(run.timer);
  run.state = { ...run.state, done: true };
  run.send({ type: 'STATE_DELTA', delta: [{ op: 'replace', path: '/done', value: true }] });
  run.send({ type: 'TEXT_MESSAGE_END', messageId: run.messageId });
  run.send({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
  run.end();
}
