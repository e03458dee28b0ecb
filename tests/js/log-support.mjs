// Random thread logs for the agui-state-sync/log tests (not a test file).
//
// randomThread(seed) writes a thread the way backends do, and keeps its own
// model of what the state is (an independent JSON Patch implementation,
// edits-support.mjs referenceApply), so tests can check the library against
// it. A thread is 2..7 runs; a third of them branch from a random earlier run
// with parentRunId. Each run interleaves state events with streamed text
// messages, tool calls, CUSTOM and STEP events; some runs end in RUN_ERROR
// (with a message left open), some send state after RUN_FINISHED.
//
// Three sequencing modes, by seed:
//  - 'plain':     no metadata (plain AG-UI; runs with only deltas: #1720);
//  - 'sequenced': metadata.seq/baseSeq/epoch, digests on some events; a run
//                 either continues its parent's epoch and seq, or starts a new
//                 epoch with a snapshot (a new emitter); faults a recorded
//                 stream really has: a delta logged twice, two deltas swapped;
//  - 'half':      seq/baseSeq numbered afresh in every run, no epoch, unsequenced
//                 snapshots (docs/wire.md section 6).
// `agui: true` leaves out what @ag-ui/client's compactEvents handles
// differently on purpose (chunk metadata, *_CHUNK events, MESSAGES_SNAPSHOT,
// messages left open), for the differential test.
import assert from 'node:assert/strict';
import { EventSchemas } from '@ag-ui/core/schemas';
import { referenceApply } from './edits-support.mjs';
import { pkg, plain, rng } from './support.mjs';

const { stateDigest } = pkg;
await pkg.initEngine(); // stateDigest() for the generated digests
export const MODES = ['plain', 'sequenced', 'half'];
const KEYS = ['a', 'b', 'c', 'list', 'obj', 'we/ird~key'];

/** Asserts that every event is a valid @ag-ui/core event, and that the schema keeps all its fields. */
export function assertAguiEvents(events, what) {
  events.forEach((event, i) => {
    const result = EventSchemas.safeParse(event);
    if (!result.success) assert.fail(`${what}: event ${i} (${event.type}) is not a valid AG-UI event: ${result.error.message}\n${JSON.stringify(event)}`);
    assert.deepEqual(plain(result.data), plain(event), `${what}: event ${i}: the schema kept every field`);
  });
}

const pointer = (tokens) => tokens.map((t) => `/${String(t).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

export class Chooser {
  constructor(seed) {
    this.random = rng(seed);
  }

  chance(p) {
    return this.random() < p;
  }

  int(n) {
    return Math.floor(this.random() * n);
  }

  pick(list) {
    return list[this.int(list.length)];
  }

  value(depth = 0) {
    const kind = this.int(depth > 1 ? 4 : 6);
    if (kind === 0) return this.int(100);
    if (kind === 1) return `s${this.int(1000)}`;
    if (kind === 2) return this.chance(0.5) ? null : this.chance(0.5);
    if (kind === 3) return this.int(1000) / 8;
    if (kind === 4) return Array.from({ length: this.int(3) }, () => this.value(depth + 1));
    return Object.fromEntries(Array.from({ length: this.int(3) }, () => [this.pick(KEYS), this.value(depth + 1)]));
  }
}

// Every [tokens, value] under `doc` (the root excluded), depth first.
function entries(doc, tokens = [], out = []) {
  if (doc === null || typeof doc !== 'object') return out;
  for (const key of Array.isArray(doc) ? doc.keys() : Object.keys(doc)) {
    const at = [...tokens, key];
    out.push([at, doc[key]]);
    entries(doc[key], at, out);
  }
  return out;
}

const isContainer = (v) => v !== null && typeof v === 'object';

// One RFC 6902 op that applies to `state` (the model checks it does).
function randomOp(c, state, fresh) {
  const all = entries(state);
  const roll = c.random();
  if (all.length === 0 || roll < 0.35) {
    const containers = [[[], state], ...all.filter(([, v]) => isContainer(v))];
    const [at, node] = c.pick(containers);
    const key = Array.isArray(node) ? (c.chance(0.5) ? '-' : c.int(node.length + 1)) : c.pick(KEYS);
    return { op: 'add', path: pointer([...at, key]), value: c.value() };
  }
  const [at, value] = c.pick(all);
  if (roll < 0.55) return { op: 'replace', path: pointer(at), value: c.value() };
  if (roll < 0.7) return { op: 'remove', path: pointer(at) };
  if (roll < 0.8) return { op: 'test', path: pointer(at), value };
  return { op: roll < 0.9 ? 'copy' : 'move', from: pointer(at), path: `/${fresh()}` };
}

/** A delta of 1..3 ops against `state`: { ops, next }. */
function randomDelta(c, state, fresh) {
  const ops = [];
  let next = state;
  for (let n = 1 + c.int(3); n > 0; n--) {
    const op = randomOp(c, next, fresh);
    const applied = referenceApply(next, [op]);
    if (applied === null) throw new Error(`generator bug: ${JSON.stringify(op)} does not apply`);
    ops.push(op);
    next = applied;
  }
  return { ops, next };
}

// Streams of events merged at random, each stream keeping its own order.
function interleave(c, streams) {
  const out = [];
  const live = streams.filter((s) => s.length > 0).map((s) => ({ s, i: 0 }));
  while (live.length > 0) {
    const k = c.int(live.length);
    const cursor = live[k];
    out.push(cursor.s[cursor.i++]);
    if (cursor.i === cursor.s.length) live.splice(k, 1);
  }
  return out;
}

function textStream(c, id, options) {
  const events = [{ type: 'TEXT_MESSAGE_START', messageId: id, role: 'assistant' }];
  for (let n = 1 + c.int(5); n > 0; n--) {
    const chunk = { type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta: `${c.pick(['Hel', 'lo', ' wor', 'ld', ' é', '😀', '\n'])}` };
    if (!options.agui && c.chance(0.15)) chunk.metadata = { part: c.int(2) };
    if (c.chance(0.2)) chunk.timestamp = 1700000000000 + c.int(1000);
    events.push(chunk);
  }
  if (!options.agui && c.chance(0.1)) events.push({ type: 'TEXT_MESSAGE_CHUNK', messageId: id, delta: '[chunk]' });
  if (!options.agui && c.chance(0.1)) events.push({ type: 'MESSAGES_SNAPSHOT', messages: [{ id, role: 'assistant', content: 'restated' }] });
  events.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta: '.' });
  if (options.agui || !options.leaveOpen) events.push({ type: 'TEXT_MESSAGE_END', messageId: id });
  return events;
}

function toolStream(c, id, parentMessageId) {
  const args = JSON.stringify({ city: c.pick(['Paris', 'Oslo']), days: c.int(9) });
  const cuts = [0, ...[1 + c.int(args.length - 1), 1 + c.int(args.length - 1)].sort((x, y) => x - y), args.length];
  const events = [{ type: 'TOOL_CALL_START', toolCallId: id, toolCallName: 'weather', parentMessageId }];
  for (let i = 0; i + 1 < cuts.length; i++) {
    if (cuts[i + 1] > cuts[i]) events.push({ type: 'TOOL_CALL_ARGS', toolCallId: id, delta: args.slice(cuts[i], cuts[i + 1]) });
  }
  events.push({ type: 'TOOL_CALL_END', toolCallId: id });
  events.push({ type: 'TOOL_CALL_RESULT', messageId: `${id}-result`, toolCallId: id, content: `sunny ${c.int(30)}` });
  return events;
}

function chatterStream(c, runId) {
  const events = [];
  if (c.chance(0.5)) events.push({ type: 'STEP_STARTED', stepName: 'plan' }, { type: 'STEP_FINISHED', stepName: 'plan' });
  if (c.chance(0.5)) events.push({ type: 'CUSTOM', name: 'progress', value: { runId, at: c.int(10) } });
  return events;
}


// The state events of one stretch and the model position after them.
// Position: { state, seq, epoch } ('half' mode: seq counts within the run).
class StateWriter {
  constructor(c, mode, seed) {
    this.c = c;
    this.mode = mode;
    this.seed = seed;
    this.epochs = 0;
    this.names = 0;
    this.points = []; // { seq, epoch, state, runId } in log order, for stateAt({ seq })
    this.faults = { duplicated: 0, swapped: 0 };
    this.fresh = () => `n${++this.names}`;
  }

  // `count` state events from `position`: { events, position }.
  write(position, count, { runId, branch, faults }) {
    const events = [];
    let pos = position;
    for (let k = 0; k < count; k++) {
      const { event, next } = this.#event(pos, k === 0 && branch);
      events.push(event);
      pos = next;
      if (pos.seq !== null) this.points.push({ seq: pos.seq, epoch: pos.epoch, state: pos.state, runId });
    }
    return { events: faults ? this.#faults(events) : events, position: pos };
  }

  #event(pos, branching) {
    const c = this.c;
    if (this.mode === 'sequenced') {
      const newEpoch = pos.seq === null || (branching && c.chance(0.5));
      if (newEpoch || c.chance(0.1)) return this.#snapshot(pos, newEpoch);
    } else if (c.chance(this.mode === 'plain' ? 0.15 : 0.1)) {
      const state = { ...c.value(), list: [] };
      return { event: { type: 'STATE_SNAPSHOT', snapshot: state }, next: { state, seq: null, epoch: null } };
    }
    const { ops, next } = randomDelta(c, pos.state, this.fresh);
    const event = { type: 'STATE_DELTA', delta: ops };
    if (this.mode === 'plain') return { event, next: { state: next, seq: null, epoch: null } };
    const base = pos.seq ?? 0;
    event.metadata = { seq: base + 1, baseSeq: base };
    if (this.mode === 'sequenced') {
      event.metadata.epoch = pos.epoch;
      if (c.chance(0.25)) event.metadata.digest = stateDigest(next);
    }
    return { event, next: { state: next, seq: base + 1, epoch: pos.epoch } };
  }

  // A sequenced snapshot: a new emitter (new epoch, seq 0) or a resync in the same epoch.
  #snapshot(pos, newEpoch) {
    const state = this.c.chance(0.5) && pos.state !== null ? pos.state : { ...this.c.value(), list: [] };
    const epoch = newEpoch ? `e${this.seed}.${++this.epochs}` : pos.epoch;
    const seq = newEpoch ? 0 : pos.seq + 1;
    const metadata = { seq, epoch, digest: stateDigest(state) };
    return { event: { type: 'STATE_SNAPSHOT', snapshot: state, metadata }, next: { state, seq, epoch } };
  }

  // What recorded streams contain: a delta logged twice, two deltas swapped.
  #faults(events) {
    const out = [];
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      const next = events[i + 1];
      if (event.type === 'STATE_DELTA' && next?.type === 'STATE_DELTA' && this.c.chance(0.12)) {
        out.push(next, event);
        this.faults.swapped++;
        i++;
      } else {
        out.push(event);
        if (event.type === 'STATE_DELTA' && this.c.chance(0.12)) {
          out.push(structuredClone(event));
          this.faults.duplicated++;
        }
      }
    }
    return out;
  }
}

/** A random thread: { seed, mode, events, order, parents, positions, points, faults, endState(), expectedAtSeq() }. */
export function randomThread(seed, options = {}) {
  const c = new Chooser(seed);
  const mode = options.mode ?? MODES[seed % MODES.length];
  const writer = new StateWriter(c, mode, seed);
  const thread = new ThreadModel(seed, mode, writer.points, writer.faults);
  let position = { state: {}, seq: null, epoch: null };
  if (mode !== 'half' && c.chance(0.4)) {
    const written = writer.write(position, 1 + c.int(2), { runId: null, branch: false, faults: false });
    thread.events.push(...written.events);
    position = written.position;
  }
  thread.record(null, null, position);
  const runs = 2 + c.int(6);
  for (let k = 1; k <= runs; k++) writeRun(c, writer, thread, `r${k}`, options);
  return thread;
}

function writeRun(c, writer, thread, runId, options) {
  const previous = thread.order.at(-1) ?? null;
  const branch = thread.order.length > 1 && c.chance(0.35);
  const parent = branch ? c.pick(thread.order) : previous;
  const started = { type: 'RUN_STARTED', threadId: 't', runId };
  if (parent !== null && (parent !== previous || c.chance(0.3))) started.parentRunId = parent;
  const faults = writer.mode === 'sequenced';
  const body = writer.write(thread.positions.get(parent), c.int(6), { runId, branch: parent !== previous, faults });
  const failed = c.chance(0.12);
  const streams = [body.events, chatterStream(c, runId)];
  for (let j = c.int(3); j > 0; j--) streams.push(textStream(c, `${runId}-m${j}`, { ...options, leaveOpen: failed && j === 1 }));
  for (let j = c.int(2); j > 0; j--) streams.push(toolStream(c, `${runId}-t${j}`, c.chance(0.5) ? `${runId}-m1` : undefined));
  thread.events.push(started, ...interleave(c, streams));
  thread.events.push(failed ? { type: 'RUN_ERROR', message: 'tool crashed' } : { type: 'RUN_FINISHED', threadId: 't', runId });
  let end = body.position;
  if (c.chance(0.15)) {
    const trailing = writer.write(end, 1, { runId, branch: false, faults: false });
    thread.events.push(...trailing.events);
    end = trailing.position;
  }
  thread.record(runId, parent, end);
}

class ThreadModel {
  constructor(seed, mode, points, faults) {
    this.seed = seed;
    this.faults = faults;
    this.mode = mode;
    this.points = points;
    this.events = [];
    this.order = []; // runIds in log order
    this.parents = new Map();
    this.positions = new Map(); // runId | null (root) -> model position at its end
  }

  record(runId, parent, position) {
    this.positions.set(runId, position);
    if (runId === null) return;
    this.order.push(runId);
    this.parents.set(runId, parent);
  }

  /** The state at the end of `runId` (null: the root). */
  endState(runId) {
    return this.positions.get(runId).state;
  }

  lineage(runId) {
    const chain = new Set([null]);
    for (let key = runId; key !== null; key = this.parents.get(key)) chain.add(key);
    return chain;
  }

  /** The model's answer to stateAt({ seq, epoch?, runId? }), or undefined when no event reaches it. */
  expectedAtSeq(seq, epoch, runId) {
    const lineage = runId === undefined ? null : this.lineage(runId);
    const point = this.points.find((p) => p.seq === seq && (epoch === undefined || p.epoch === epoch) && (lineage === null || lineage.has(p.runId)));
    return point?.state;
  }
}
