// AG-UI agents written the way backends write them: a plain Node http server
// that answers each POSTed RunAgentInput with `text/event-stream`, every event
// encoded by the real @ag-ui/encoder. Three state shapes:
//  - 'docs':      the AG-UI docs' pattern: an unsequenced STATE_SNAPSHOT at the
//                 start of each run, then unsequenced STATE_DELTAs;
//  - 'snapshots': a STATE_SNAPSHOT of the whole state after every change;
//  - 'seed':      the seed article's backend: an unstamped snapshot, then deltas
//                 with top-level `seq` / `base_seq`, counted from base_seq 0 in every run.
// Chat text (TEXT_MESSAGE_*) and a tool call are interleaved with the state
// changes. The agent keeps each thread's state across runs (like a backend's
// thread store) and records every state it held, every request, and whether a
// request was closed before its run completed (an abort).
// With buildScript({ activities: n }), n AG-UI activities (cards) change too,
// as plain backends send them: an unstamped ACTIVITY_SNAPSHOT the first time
// a run touches one, then ACTIVITY_DELTAs ('snapshots': an ACTIVITY_SNAPSHOT
// of the whole content every time); the agent records every content each held.
// Faults for tests: HTTP errors, a socket destroyed mid-run, a stream that ends
// without RUN_FINISHED, and a wrong delta (its state moved on, the delta it
// sent does not apply) followed later by a snapshot.
import { createServer } from 'node:http';
import { EventEncoder } from '@ag-ui/encoder';
import { prng } from './fault-link.mjs';

export const SHAPES = Object.freeze(['docs', 'snapshots', 'seed']);


const WORDS = ['the', 'offsite', 'budget', 'venue', 'lisbon', 'flights', 'are', 'booked', 'for', 'team', 'of', 'twelve', 'people', 'and', 'dinner', 'on', 'friday', 'é', '✓'];

export const INITIAL_STATE = Object.freeze({ title: 'plan', counter: 0, items: [] });

/** One state change of the script: the RFC 6902 ops and the state after them. */
function stateStep(state, random, index) {
  const kind = state.items.length > 3 && random() < 0.25 ? 'remove' : ['add', 'title', 'counter'][Math.floor(random() * 3)];
  if (kind === 'remove') {
    return { ops: [{ op: 'remove', path: '/items/0' }], next: { ...state, items: state.items.slice(1) } };
  }
  if (kind === 'title') {
    const title = `plan ${index} ${WORDS[Math.floor(random() * WORDS.length)]}`;
    return { ops: [{ op: 'replace', path: '/title', value: title }], next: { ...state, title } };
  }
  if (kind === 'counter') {
    return { ops: [{ op: 'replace', path: '/counter', value: state.counter + 1 }], next: { ...state, counter: state.counter + 1 } };
  }
  const item = { id: `i${index}`, label: WORDS.slice(0, 1 + Math.floor(random() * 6)).join(' ') };
  return { ops: [{ op: 'add', path: '/items/-', value: item }], next: { ...state, items: [...state.items, item] } };
}

/** A message's text, in 2-6 word chunks: { messageId, chunks }. */
function textBeat(random, index) {
  const words = Array.from({ length: 6 + Math.floor(random() * 14) }, () => WORDS[Math.floor(random() * WORDS.length)]);
  const chunks = [];
  for (let i = 0; i < words.length;) {
    const n = 2 + Math.floor(random() * 5);
    chunks.push((i ? ' ' : '') + words.slice(i, i + n).join(' '));
    i += n;
  }
  return { kind: 'text', messageId: `m${index}`, chunks };
}

/**
 * The beats of one run, deterministic per seed: `steps` state changes, a
 * message every `textEvery` steps, one tool call in the middle. A state beat
 * is { kind: 'state', index } (its change is computed from the thread's state
 * when it plays); `change(state, beat)` gives { ops, next }.
 */
export function buildScript({ seed = 1, steps = 12, textEvery = 3, toolCall = true, activities = 0 } = {}) {
  const random = prng(seed);
  const beats = [];
  for (let i = 0; i < steps; i++) {
    if (textEvery > 0 && i % textEvery === 0) beats.push(textBeat(random, i));
    if (toolCall && i === Math.floor(steps / 2)) {
      beats.push({ kind: 'tool', toolCallId: `tc${i}`, name: 'book_venue', args: ['{"city":', '"lisbon",', '"seats":12}'] });
    }
    beats.push({ kind: 'state', index: i, salt: Math.floor(random() * 2 ** 31) });
    if (activities > 0) {
      const messageId = `card-${Math.floor(random() * activities)}`;
      beats.push({ kind: 'activity', messageId, index: i, salt: Math.floor(random() * 2 ** 31) });
    }
  }
  return beats;
}

/** An activity's content before its first change. */
export const INITIAL_CARD = Object.freeze({ title: 'card', counter: 0, items: [] });

/** The change a state beat makes to `state`. */
export function change(state, beat) {
  return stateStep(state, prng(beat.salt), beat.index);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Starts an agent on 127.0.0.1. options:
 *   shape ('docs' | 'snapshots' | 'seed'), script (buildScript()), stepMs (between beats),
 *   initialState, faults: { status, breakAfterEvents, noFinish, badDeltaAt, snapshotAt, hold }
 *   (hold: a Promise; the run's RUN_FINISHED waits for it, or ends with the client).
 * Returns { url, port, requests, history(threadId), state(threadId), setFaults(f), close() };
 * each request: { headers, input, events, completed, aborted, closed (a Promise) }.
 */
export async function startUpstream(options = {}) {
  const agent = new ScriptedAgent(options);
  const server = createServer((req, res) => {
    agent.handle(req, res).catch((error) => {
      agent.errors.push(error);
      res.destroy();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    port,
    url: `http://127.0.0.1:${port}/agent`,
    requests: agent.requests,
    errors: agent.errors,
    history: (threadId) => agent.history(threadId),
    state: (threadId) => agent.current(threadId),
    activityHistory: (threadId, messageId) => agent.activityHistory(threadId, messageId),
    activities: (threadId) => agent.activities(threadId),
    setFaults: (faults) => {
      agent.faults = { ...faults };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

class ScriptedAgent {
  requests = [];
  errors = [];
  #histories = new Map();
  #cards = new Map(); // threadId -> Map(messageId -> every content it held)

  constructor({ shape = 'docs', script = buildScript(), stepMs = 5, initialState = INITIAL_STATE, faults = {} }) {
    if (!SHAPES.includes(shape)) throw new Error(`unknown shape ${shape}`);
    this.shape = shape;
    this.script = script;
    this.stepMs = stepMs;
    this.initialState = initialState;
    this.faults = faults;
  }

  /** Every state the thread held, oldest first. */
  history(threadId) {
    if (!this.#histories.has(threadId)) this.#histories.set(threadId, [this.initialState]);
    return this.#histories.get(threadId);
  }

  current(threadId) {
    const states = this.history(threadId);
    return states[states.length - 1];
  }

  /** Every content activity `messageId` of the thread held, oldest first ([] before its first). */
  activityHistory(threadId, messageId) {
    if (!this.#cards.has(threadId)) this.#cards.set(threadId, new Map());
    const cards = this.#cards.get(threadId);
    if (!cards.has(messageId)) cards.set(messageId, []);
    return cards.get(messageId);
  }

  /** The thread's activities' current contents, by messageId. */
  activities(threadId) {
    const out = {};
    for (const [id, contents] of this.#cards.get(threadId) ?? []) if (contents.length) out[id] = contents.at(-1);
    return out;
  }

  async handle(req, res) {
    let body = '';
    for await (const chunk of req) body += chunk;
    const input = JSON.parse(body);
    const record = { headers: req.headers, input, events: [], completed: false, aborted: false };
    record.closed = new Promise((resolve) => res.on('close', () => {
      record.aborted = !record.completed;
      resolve();
    }));
    this.requests.push(record);
    const faults = this.faults;
    if (faults.status) {
      res.writeHead(faults.status, { 'content-type': 'application/json' }).end('{"error":"scripted failure"}');
      return;
    }
    const encoder = new EventEncoder({ accept: req.headers.accept });
    res.writeHead(200, { 'content-type': encoder.getContentType(), 'cache-control': 'no-cache' });
    const send = (event) => {
      if (faults.breakAfterEvents !== undefined && record.events.length >= faults.breakAfterEvents) {
        res.destroy();
        return false;
      }
      record.events.push(event);
      res.write(encoder.encode(event));
      return true;
    };
    await this.#play(input, res, send, faults);
    if (res.destroyed) return;
    if (faults.hold) await Promise.race([faults.hold, record.closed]);
    if (res.destroyed) return;
    if (!faults.noFinish && !send({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId })) return;
    record.completed = true;
    res.end();
  }

  async #play(input, res, send, faults) {
    const { threadId } = input;
    send({ type: 'RUN_STARTED', threadId, runId: input.runId });
    send({ type: 'STATE_SNAPSHOT', snapshot: this.current(threadId) });
    let stateBeat = 0;
    const touched = new Set(); // activities this run has sent a snapshot of
    for (const beat of this.script) {
      await sleep(this.stepMs);
      if (res.destroyed) return;
      if (beat.kind === 'state') this.#stateBeat(threadId, beat, stateBeat++, send, faults);
      else if (beat.kind === 'activity') this.#activityBeat(threadId, beat, touched, send);
      else if (beat.kind === 'text') this.#text(beat, send);
      else this.#tool(beat, send);
    }
  }

  #activityBeat(threadId, beat, touched, send) {
    const contents = this.activityHistory(threadId, beat.messageId);
    const { ops, next } = change(contents.at(-1) ?? INITIAL_CARD, beat);
    contents.push(next);
    const base = { messageId: beat.messageId, activityType: 'card' };
    if (this.shape === 'snapshots' || !touched.has(beat.messageId)) send({ type: 'ACTIVITY_SNAPSHOT', ...base, content: next });
    else send({ type: 'ACTIVITY_DELTA', ...base, patch: ops });
    touched.add(beat.messageId);
  }

  #stateBeat(threadId, beat, index, send, faults) {
    const { ops, next } = change(this.current(threadId), beat);
    this.history(threadId).push(next);
    if (this.shape === 'snapshots' || index === faults.snapshotAt) {
      send({ type: 'STATE_SNAPSHOT', snapshot: next });
      return;
    }
    // A backend bug: the delta sent is not the change made (a failing test op first).
    const delta = index === faults.badDeltaAt ? [{ op: 'test', path: '/counter', value: -1 }, ...ops] : ops;
    if (this.shape === 'docs') send({ type: 'STATE_DELTA', delta });
    else send({ type: 'STATE_DELTA', delta, seq: index + 1, base_seq: index });
  }

  #text(beat, send) {
    send({ type: 'TEXT_MESSAGE_START', messageId: beat.messageId, role: 'assistant' });
    for (const chunk of beat.chunks) send({ type: 'TEXT_MESSAGE_CONTENT', messageId: beat.messageId, delta: chunk });
    send({ type: 'TEXT_MESSAGE_END', messageId: beat.messageId });
  }

  #tool(beat, send) {
    send({ type: 'TOOL_CALL_START', toolCallId: beat.toolCallId, toolCallName: beat.name });
    for (const args of beat.args) send({ type: 'TOOL_CALL_ARGS', toolCallId: beat.toolCallId, delta: args });
    send({ type: 'TOOL_CALL_END', toolCallId: beat.toolCallId });
  }
}

/** The full text of each message in `events` (TEXT_MESSAGE_CONTENT deltas joined), by messageId. */
export function messageTexts(events) {
  const texts = {};
  for (const event of events) {
    if (event.type === 'TEXT_MESSAGE_CONTENT') texts[event.messageId] = (texts[event.messageId] ?? '') + event.delta;
  }
  return texts;
}
