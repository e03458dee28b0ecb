// agui-state-sync/log: compactEvents on thread logs of 25,000, 50,000 and
// 100,000 events. Compaction is one pass, so the time per event should stay
// about the same as the log grows. Not a test: it prints.
//
//   node --expose-gc bench/js/bench_log.mjs [sizes=25000,50000,100000]
//
// The thread (deterministic): runs of about 60 events. Each run streams a
// ~25-token assistant message and a tool call (~10 argument chunks and its
// result), and changes the state ~15 times through a real StateEmitter
// (sequenced deltas, a digest every 16th seq): counters replaced, items added
// to and removed from a bounded list, a per-run step list, and an entry in a
// history of the last 20 runs. One run in ten branches from a random earlier
// run (parentRunId): a new emitter, with a new epoch, starts from that run's
// end state (as stateAt() would give it). Reported per size: the medians of 5
// timed compactions (after one warm-up) of wall and CPU time, CPU µs per
// input event, events and bytes before and after, and a replayEquivalent
// check (not timed).
//
// The second table is the known limit: a state that grows with the log (one
// list, one item more per state event; one timed run). The per-event cost then
// grows with the list, because each delta copies the containers on its path
// (the StateSync's JS mirror shares structure between versions), and each
// run's folded snapshot and digest cost the state's size.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const { createStateEmitter } = await import(join(here, '..', '..', 'js', 'src', 'index.js'));
const { compactEvents, replayEquivalent, serializeLog } = await import(join(here, '..', '..', 'js', 'src', 'log.js'));

const sizes = (process.argv[2] ?? '25000,50000,100000').split(',').map(Number);
const ROUNDS = 5;

function lcg(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

// The next state of a run: one of the edits an agent makes.
function nextState(state, random, runIndex, step) {
  const items = state.items;
  switch (step % 4) {
    case 0: return { ...state, counters: { ...state.counters, tokens: state.counters.tokens + 1 + Math.floor(random() * 40) } };
    case 1: return items.length < 40 && random() < 0.7
      ? { ...state, items: [...items, { id: `i${runIndex}.${step}`, label: `item ${step}`, done: false }] }
      : { ...state, items: items.slice(1) };
    case 2: return { ...state, steps: [...state.steps, { step, note: `did ${step}` }] };
    default: return { ...state, items: items.map((item, i) => (i === step % Math.max(items.length, 1) ? { ...item, done: !item.done } : item)) };
  }
}

function messageEvents(runId, random) {
  const messageId = `${runId}-m`;
  const toolCallId = `${runId}-t`;
  const events = [{ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' }];
  for (let i = 0; i < 25; i++) events.push({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: ` tok${Math.floor(random() * 1000)}` });
  events.push({ type: 'TEXT_MESSAGE_END', messageId }, { type: 'TOOL_CALL_START', toolCallId, toolCallName: 'search', parentMessageId: messageId });
  const args = JSON.stringify({ query: `q ${runId}`, limit: 10, filters: ['a', 'b', 'c'] });
  for (let i = 0; i < args.length; i += 6) events.push({ type: 'TOOL_CALL_ARGS', toolCallId, delta: args.slice(i, i + 6) });
  events.push({ type: 'TOOL_CALL_END', toolCallId }, { type: 'TOOL_CALL_RESULT', messageId: `${runId}-r`, toolCallId, content: 'three results' });
  return events;
}

// One run's events: the state stream spread through the message stream.
function runEvents(emitter, runId, state, random, runIndex) {
  const messages = messageEvents(runId, random);
  const stateEvents = [];
  let next = { ...state, steps: [], history: [...state.history.slice(-19), runId] }; // the last 20 runs
  stateEvents.push(...emitter.update(next));
  for (let step = 0; step < 14; step++) {
    next = nextState(next, random, runIndex, step);
    stateEvents.push(...emitter.update(next));
  }
  const body = [];
  const every = Math.max(1, Math.floor(messages.length / stateEvents.length));
  while (messages.length > 0 || stateEvents.length > 0) {
    body.push(...messages.splice(0, every));
    if (stateEvents.length > 0) body.push(stateEvents.shift());
  }
  return { body, end: next };
}

async function thread(size) {
  const random = lcg(size);
  const initial = { counters: { tokens: 0 }, items: [], steps: [], history: [] };
  let emitter = await createStateEmitter({ initialState: initial, epoch: 'e0' });
  const emitters = [emitter];
  const events = [emitter.snapshot()];
  const ends = [];
  for (let k = 0; events.length < size; k++) {
    const runId = `r${k}`;
    const started = { type: 'RUN_STARTED', threadId: 't', runId };
    let state = ends.at(-1)?.state ?? initial;
    if (k > 0 && random() < 0.1) {
      const parent = ends[Math.floor(random() * ends.length)];
      started.parentRunId = parent.runId;
      emitter = await createStateEmitter({ initialState: parent.state, epoch: `e${k}` });
      emitters.push(emitter);
      state = parent.state;
    }
    const { body, end } = runEvents(emitter, runId, state, random, k);
    if (started.parentRunId !== undefined) body.unshift(emitter.snapshot());
    events.push(started, ...body, { type: 'RUN_FINISHED', threadId: 't', runId });
    ends.push({ runId, state: end });
  }
  for (const e of emitters) e.dispose();
  return events;
}

// Wall time and this process's CPU time (steadier on a shared machine), medians of ROUNDS.
async function measure(events) {
  await compactEvents(events); // warm-up
  const wall = [];
  const cpu = [];
  let compacted;
  for (let r = 0; r < ROUNDS; r++) {
    globalThis.gc?.();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    compacted = await compactEvents(events);
    wall.push(performance.now() - t0);
    const used = process.cpuUsage(c0);
    cpu.push((used.user + used.system) / 1000);
  }
  const median = (list) => list.sort((a, b) => a - b)[Math.floor(list.length / 2)];
  return { ms: median(wall), cpuMs: median(cpu), compacted };
}

const rows = [];
for (const size of sizes) {
  const events = await thread(size);
  const { ms, cpuMs, compacted } = await measure(events);
  const verdict = await replayEquivalent(events, compacted);
  const branches = events.filter((e) => e.type === 'RUN_STARTED' && e.parentRunId !== undefined).length;
  rows.push({
    events: events.length,
    runs: events.filter((e) => e.type === 'RUN_STARTED').length,
    branches,
    'wall ms': ms.toFixed(0),
    'CPU ms': cpuMs.toFixed(0),
    'CPU µs / event': ((cpuMs * 1000) / events.length).toFixed(2),
    'events after': compacted.length,
    'KB before': Math.round(serializeLog(events).length / 1024),
    'KB after': Math.round(serializeLog(compacted).length / 1024),
    equivalent: verdict.equal,
  });
}
console.log(`bench_log: compactEvents on thread logs (runs of ~60 events, 1 in 10 a branch), median of ${ROUNDS} runs after a warm-up`);
console.table(rows);
const perEvent = rows.map((r) => Number(r['CPU µs / event']));
console.log(`CPU µs per event, largest / smallest log: ${(perEvent.at(-1) / perEvent[0]).toFixed(2)} (1.00 = linear)`);

// A log whose state is one list that grows by an item per state event (every
// fourth event), in runs of 60 events.
function growingLog(size) {
  const events = [{ type: 'RUN_STARTED', threadId: 't', runId: 'r0' }, { type: 'STATE_SNAPSHOT', snapshot: { log: [] }, metadata: { seq: 0, epoch: 'g' } }];
  let seq = 0;
  let run = 0;
  while (events.length < size) {
    if (events.length % 60 === 0) events.push({ type: 'RUN_FINISHED', threadId: 't', runId: `r${run}` }, { type: 'RUN_STARTED', threadId: 't', runId: `r${++run}` });
    if (events.length % 4 === 0) {
      seq++;
      events.push({ type: 'STATE_DELTA', delta: [{ op: 'add', path: '/log/-', value: { seq } }], metadata: { seq, baseSeq: seq - 1, epoch: 'g' } });
    } else events.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: `m${run}`, delta: ' tok' });
  }
  return events;
}

const growing = [];
for (const size of sizes) {
  const events = growingLog(size);
  await compactEvents(events.slice(0, 2000)); // warm-up
  globalThis.gc?.();
  const c0 = process.cpuUsage();
  await compactEvents(events);
  const used = process.cpuUsage(c0);
  const cpuMs = (used.user + used.system) / 1000;
  growing.push({ events: events.length, 'final list length': Math.floor(size / 4), 'CPU ms': cpuMs.toFixed(0), 'CPU µs / event': ((cpuMs * 1000) / events.length).toFixed(2) });
}
console.log('bench_log: the limit, a state that grows with the log (one list, +1 item per state event; one run each)');
console.table(growing);
