// An AG-UI agent run that outlives its connections (a resumable stream).
//
// The scripted agent works on its own clock; every connection that is attached
// gets the run's events through its own FaultyWire. A client that (re)connects
// says where its state is (X-AGUI-State-Seq / -Epoch / -Resync-Reason or
// Last-Event-ID headers, or RunAgentInput.forwardedProps.stateSync), and the
// package's catchUp() answers: nothing, the missed deltas (replay), or one
// snapshot. Then a heartbeat carrying the current seq, then the live stream.
//
// The thread's runs: the client's first RunAgentInput starts the first run
// (RUN_STARTED echoes its runId); a new runId on a finished thread is a
// follow-up run; a new runId with a parentRunId naming an earlier run is a
// branch (AG-UI's time travel): the agent starts again from the state that
// run ended with, read from the thread's log (branchFrom), in a new epoch.
import { randomBytes } from 'node:crypto';

import { applyClientEdits, describeResult, editsOf } from './edits.mjs';
import { FaultyWire } from './faults.mjs';
import { branchScript, buildScript, followUpScript, INITIAL_STATE } from './script.mjs';
import { ThreadLog } from './thread-log.mjs';

const HEARTBEAT_MS = 1000;
const CHUNK_MS = 45; // spacing of TEXT_MESSAGE_CONTENT chunks
const frame = (event) => `data: ${JSON.stringify(event)}\n\n`;

const RUN_ID = /^[\w.:-]{1,100}$/;
const newRunId = () => `run-${randomBytes(4).toString('hex')}`;

/** An error the HTTP layer answers with `status` (and no stream). */
export class RunRefused extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// A fresh epoch each: a client of an earlier emitter (another branch) gets a
// snapshot, never a replay of seqs that meant something else.
const newEmitter = (pkg, initialState) => pkg.createStateEmitter({
  initialState,
  // Overwrites of the proposal carry `test` ops of the value they replace.
  guardedPaths: ['/proposal'],
  epoch: randomBytes(6).toString('hex'),
});

export class AgentRun {
  static async create(options) {
    return new AgentRun(options, await newEmitter(options.pkg, INITIAL_STATE));
  }

  constructor({ threadId, pkg, getFaults, stepMs = 180, clock = null, log = () => {} }, emitter) {
    this.threadId = threadId;
    this.clock = clock; // the server's pause switch (POST /clock): a paused agent holds before its next beat
    this.pkg = pkg;
    this.getFaults = getFaults;
    this.stepMs = stepMs;
    this.log = log;
    this.emitter = emitter;
    this.runId = null; // the client's first RunAgentInput names it
    this.runStartedAt = 0; // the index of the run's RUN_STARTED in the thread's log
    this.parentRunId = null;
    this.thread = new ThreadLog(threadId);
    this.receiving = Promise.resolve(); // one RunAgentInput at a time: a branch swaps the emitter
    this.script = buildScript();
    this.pos = 0;
    this.eventIndex = 0;
    this.connSeq = 0;
    this.conns = new Set();
    this.deliveries = new Map();
    this.openMessage = null;
    this.activityTypes = new Map(); // messageId -> activityType, of the activities this emitter holds
    this.messagePrefix = 'msg-'; // per run: a follow-up's message ids must not repeat the first run's
    this.finished = false;
    this.finishedEvent = null;
    this.outageUntil = 0;
    this.startedAt = Date.now();
    this.truth = [];
    this.faultLog = [];
    this.approvals = [];
    this.approvalStore = pkg.memoryStore(); // consumeApproval's records: a re-sent approval pays once
    this.clientRuns = new Set(); // the runIds of the client's RunAgentInputs
    this.edits = new Map(); // editId -> the agent's verdict (applyEdits result)
    this.stats = { connections: 0, cuts: 0, bytesWritten: 0, catchUps: { current: 0, replay: 0, snapshot: 0 } };
    this.connLog = []; // per connection: where the client said it was, and how it was caught up
    this.recordTruth();
    this.timer = null;
    this.onResume = null; // what the paused clock holds (hold())
    this.hbTimer = setInterval(() => this.heartbeat(), HEARTBEAT_MS);
  }

  get state() { return this.emitter.state; }
  get seq() { return this.emitter.seq; }

  recordTruth() {
    const digest = this.pkg.stateDigest(this.emitter.state);
    this.truth.push({ seq: this.emitter.seq, digest, t: Date.now() - this.startedAt });
    if (this.truth.length > 400) this.truth.shift();
    this.digest = digest;
  }

  // The agent's clock starts with its first connection. A run the paused
  // clock holds goes on when the clock does (a second beat scheduled here
  // would run the script twice over: two messages streaming at once).
  start() {
    if (this.timer || this.finished || this.onResume) return;
    this.timer = setTimeout(() => this.next(), this.stepMs);
  }

  dispose() {
    clearTimeout(this.timer);
    clearInterval(this.hbTimer);
    for (const c of this.conns) c.wire.dispose();
    this.conns.clear();
    this.emitter.dispose();
  }

  // ---- emitting -----------------------------------------------------------
  broadcast(text, key) {
    for (const c of this.conns) c.wire.send(text, key);
  }

  // Chat text is spared from drop/duplicate/reorder so the transcript stays
  // readable: the demo is about state.
  emitText(event) {
    this.thread.append(event);
    const text = frame(event);
    for (const c of this.conns) c.wire.spared(text);
  }

  emitState(events) {
    for (const ev of events) {
      this.thread.append(ev);
      this.broadcast(...this.framed(ev));
    }
    this.recordTruth();
  }

  // [SSE frame, fault key] of a state or activity event. The key is per
  // activity and seq for an activity (`a-<messageId>-<seq>`), so a seed gives
  // the same fates whatever the timing; its frame carries no SSE id (that
  // names the state's seq).
  framed(ev) {
    const { seq } = this.pkg.wireFields(ev);
    if (ev.type === 'ACTIVITY_SNAPSHOT' || ev.type === 'ACTIVITY_DELTA') return [this.emitter.activities.encode(ev), `a-${ev.messageId}-${seq}`];
    return [this.emitter.encode(ev), `${ev.type === 'STATE_SNAPSHOT' ? 'snap' : 's'}${seq}`];
  }

  // The activity's events go through the fault injector like the state's.
  emitActivity(events) {
    for (const ev of events) {
      this.thread.append(ev);
      this.activityTypes.set(ev.messageId, ev.activityType);
      this.broadcast(...this.framed(ev));
    }
  }

  // The beat's ACTIVITY_SNAPSHOT (its content) or ACTIVITY_DELTA (its ops on the content the agent holds).
  activityEvents({ messageId, activityType, content, ops }) {
    const activities = this.emitter.activities;
    if (!ops) return activities.snapshot(messageId, activityType, content);
    return activities.patch(messageId, activityType, ops(activities.content(messageId)));
  }

  /** The agent's own activities: { [messageId]: { activityType, seq, content } }. */
  activitiesView() {
    const out = {};
    for (const [messageId, activityType] of this.activityTypes) {
      const { activities } = this.emitter;
      out[messageId] = { activityType, seq: activities.seq(messageId), content: activities.content(messageId) ?? null };
    }
    return out;
  }

  heartbeat() {
    if (this.finished) return;
    const hb = this.emitter.heartbeat();
    for (const c of this.conns) c.wire.control(hb);
  }

  // The paused clock (POST /clock) holds the agent at its next beat or word:
  // `then` runs when the clock goes on (resume()). False when it is running.
  hold(then) {
    if (!this.clock?.paused) return false;
    this.timer = null;
    this.onResume = then;
    this.clock.held.add(this);
    return true;
  }

  resume() {
    const then = this.onResume;
    this.onResume = null;
    if (then) then();
  }

  next() {
    this.timer = null;
    if (this.hold(() => this.next())) return;
    const beat = this.script[this.pos++];
    if (!beat) return;
    if (beat.say) { this.say(beat.say, () => this.schedule()); return; }
    if (beat.activity) {
      this.emitActivity(this.activityEvents(beat.activity));
      this.log(`activity ${beat.activity.messageId} seq ${this.emitter.activities.seq(beat.activity.messageId)}: ${beat.note}`);
      this.schedule();
      return;
    }
    if (beat.state || beat.ops) {
      const { state } = this.emitter;
      const events = beat.ops ? this.emitter.patch(beat.ops(state)) : this.emitter.update(beat.state(state));
      this.emitState(events);
      this.log(`seq ${this.emitter.seq}: ${beat.note}`);
      this.schedule();
      return;
    }
    if ('finish' in beat) this.finish(beat.finish);
  }

  schedule() { this.timer = setTimeout(() => this.next(), this.stepMs); }

  say(text, done) {
    const messageId = `${this.messagePrefix}${this.pos}`;
    this.openMessage = messageId;
    this.emitText({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' });
    const words = text.split(' ');
    let i = 0;
    const tick = () => {
      if (this.hold(tick)) return; // mid-message too: a reload during a held answer sees it go on
      if (i < words.length) {
        const n = 2 + (i % 3);
        const delta = (i ? ' ' : '') + words.slice(i, i + n).join(' ');
        i += n;
        this.emitText({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta });
        this.timer = setTimeout(tick, CHUNK_MS);
        return;
      }
      this.emitText({ type: 'TEXT_MESSAGE_END', messageId });
      this.openMessage = null;
      done();
    };
    this.timer = setTimeout(tick, CHUNK_MS);
  }

  finish(interrupt) {
    this.finished = true;
    clearInterval(this.hbTimer);
    this.finishedEvent = { type: 'RUN_FINISHED', threadId: this.threadId, runId: this.runId };
    if (interrupt) this.finishedEvent.outcome = { type: 'interrupt', interrupts: [{ ...interrupt }] };
    this.thread.append(this.finishedEvent);
    this.thread.runEnded(this.runId, { seq: this.emitter.seq, epoch: this.emitter.epoch, digest: this.digest });
    const hb = this.emitter.heartbeat();
    const key = `e${this.eventIndex++}`;
    for (const c of this.conns) {
      c.wire.control(hb);
      c.wire.send(frame(this.finishedEvent), key);
      c.wire.finish();
    }
    this.log(`run finished at seq ${this.emitter.seq}${interrupt ? ` (interrupt: ${interrupt.reason})` : ''}`);
  }

  // ---- the client's runs and edits -------------------------------------------
  // Before attach(): a new client runId starts a run (the first one, a
  // follow-up of a finished run, or a branch from an earlier one), then the
  // user's edits in this RunAgentInput go to the emitter (their ack delta is
  // part of this connection's catch-up). One input at a time.
  receive(input) {
    const next = this.receiving.then(() => this.receiveNow(input));
    this.receiving = next.catch(() => {});
    return next;
  }

  async receiveNow(input) {
    const asked = input && typeof input.runId === 'string' && RUN_ID.test(input.runId) ? input.runId : null;
    const runId = asked ?? (this.runId === null ? newRunId() : null);
    const starting = runId !== null && !this.clientRuns.has(runId);
    const parentRunId = starting ? this.parentFor(input) : null;
    if (starting) this.clientRuns.add(runId);
    if (starting && this.runId === null) this.firstRun(runId, input);
    else if (parentRunId !== null && parentRunId !== this.runId) return this.branch(runId, parentRunId, input);
    const follows = starting && this.finished;
    if (follows) this.beginRun(runId, parentRunId, input);
    const { events, results } = applyClientEdits(this.emitter, input);
    if (events.length) this.emitState(events);
    for (const r of results) {
      if (!this.edits.has(r.editId)) this.log(describeResult(r));
      this.edits.set(r.editId, r);
    }
    if (follows) this.followUp(results);
  }

  // The run a new RunAgentInput names as its parent: null for none; refused
  // (no stream) for a run this thread never had, or while a run is going.
  parentFor(input) {
    const parent = input.parentRunId;
    if (parent === undefined || parent === null) return null;
    if (typeof parent !== 'string' || !this.thread.hasRun(parent)) throw new RunRefused(400, `parentRunId ${JSON.stringify(parent)} names no run of this thread`);
    if (!this.finished) throw new RunRefused(409, `run ${this.runId} is still going: branch when it has finished`);
    if (this.thread.full) throw new RunRefused(409, 'this thread\'s log is full');
    return parent;
  }

  beginRun(runId, parentRunId, input) {
    this.runStartedAt = this.thread.events.length; // where its RUN_STARTED goes in the log
    this.runId = runId;
    this.parentRunId = parentRunId;
    this.finished = false;
    this.finishedEvent = null;
    this.thread.runStarted(runId, parentRunId, input);
  }

  // The thread's first run: the log starts with the state the agent starts from.
  firstRun(runId, input) {
    this.beginRun(runId, null, input);
    this.thread.append(this.emitter.snapshot());
    this.log(`run ${runId}`);
  }

  startScript(script) {
    this.script = script;
    this.pos = 0;
    this.messagePrefix = `msg-${this.runId}-`;
    clearInterval(this.hbTimer);
    this.hbTimer = setInterval(() => this.heartbeat(), HEARTBEAT_MS);
  }

  followUp(results) {
    const approved = this.approvals.some((a) => a.matched);
    this.startScript(followUpScript({ results, limit: this.emitter.state.budget.limit, approved }));
    this.log(`follow-up run ${this.runId}${this.parentRunId ? ` of ${this.parentRunId}` : ''} (${results.length} edits with it)`);
  }

  // A branch: the state `parentRunId` ended with, replayed from the thread's
  // log, in a new emitter (new epoch). Edits travel with follow-ups, not
  // branches: they were made on another branch's state (the page offers a
  // branch only with none pending), so any here are left out, and said so.
  async branch(runId, parentRunId, input) {
    const from = await this.pkg.branchFrom(this.thread.events, parentRunId);
    const emitter = await newEmitter(this.pkg, from.state);
    const old = this.emitter;
    this.emitter = emitter;
    this.activityTypes = new Map(); // the new emitter holds none
    old.dispose();
    this.beginRun(runId, parentRunId, input);
    this.thread.append(this.emitter.snapshot());
    this.truth = []; // seqs of the old epoch mean nothing in the new one
    this.recordTruth();
    const ignored = editsOf(input).length;
    const approved = this.approvals.some((a) => a.matched);
    this.startScript(branchScript({ parentRunId, state: from.state, approved }));
    this.log(`branch ${runId} from ${parentRunId} at its seq ${from.seq ?? '-'} (new epoch ${this.emitter.epoch})${ignored ? `; ${ignored} edits left out` : ''}`);
  }

  // ---- connections ----------------------------------------------------------
  // Attach an HTTP response. `position` is what the package's catchUp() reads:
  // a RunAgentInput (forwardedProps.stateSync: the client's position, its
  // activities' too), or a request with X-AGUI-State-* / Last-Event-ID headers.
  // `attached`: an X-AGUI-Attach (attachClient), said in the response's
  // X-AGUI-Attach header; else a POST of the run's runId.
  attach(res, position, { attached = false } = {}) {
    const connNo = ++this.connSeq;
    this.stats.connections++;
    const answer = this.pkg.catchUp(this.emitter, position);
    this.stats.catchUps[answer.mode] = (this.stats.catchUps[answer.mode] || 0) + 1;
    const wire = this.openWire(res, connNo, { [this.pkg.HEADER_CATCH_UP]: answer.mode, ...(attached ? { [this.pkg.HEADER_ATTACH]: 'run' } : {}) });
    const conn = { wire, connNo };
    res.on('close', () => this.conns.delete(conn));

    const lineage = this.parentRunId ? { parentRunId: this.parentRunId } : {};
    wire.send(frame({ type: 'RUN_STARTED', threadId: this.threadId, runId: this.runId, ...lineage }), `start${connNo}`);
    this.sendCatchUp(wire, connNo, position, answer, attached);
    if (this.finished) {
      wire.send(frame(this.finishedEvent), `fin${connNo}`);
      wire.finish();
      return conn;
    }
    // The run so far, as the proxy's attach (and its POST of a live runId)
    // sends it: every event since its RUN_STARTED that is not a state or
    // activity event (the catch-up has those). The log is complete from the
    // run's start, so every message comes with its TEXT_MESSAGE_START and the
    // answer being streamed arrives from its first word: a page that was
    // away (reloaded, another page, or cut and reconnecting) reads every
    // message whole, and the stream stays a valid AG-UI sequence.
    for (const ev of this.thread.events.slice(this.runStartedAt + 1)) if (!isStateEvent(ev)) wire.spared(frame(ev));
    this.conns.add(conn);
    this.start();
    return conn;
  }

  // X-AGUI-Attach (docs/wire.md section 8): the running run, or, with none
  // going (not started, or finished), a run of its own that brings the state
  // up to date and ends: RUN_STARTED, the catch-up, a heartbeat, RUN_FINISHED.
  attachClient(res, position) {
    if (this.runId !== null && !this.finished) return this.attach(res, position, { attached: true });
    const connNo = ++this.connSeq;
    this.stats.connections++;
    const answer = this.pkg.catchUp(this.emitter, position);
    this.stats.catchUps[answer.mode] = (this.stats.catchUps[answer.mode] || 0) + 1;
    const wire = this.openWire(res, connNo, { [this.pkg.HEADER_CATCH_UP]: answer.mode, [this.pkg.HEADER_ATTACH]: 'idle' });
    const ids = { threadId: this.threadId, runId: `attach-${connNo}-${randomBytes(3).toString('hex')}` };
    wire.spared(frame({ type: 'RUN_STARTED', ...ids }));
    this.sendCatchUp(wire, connNo, position, answer, true);
    wire.spared(frame({ type: 'RUN_FINISHED', ...ids }));
    wire.finish();
    return null;
  }

  // The SSE response of connection `connNo`, behind its own fault injector.
  openWire(res, connNo, headers) {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    });
    res.flushHeaders();
    return new FaultyWire(res, {
      id: connNo,
      getConfig: this.getFaults,
      deliveries: this.deliveries,
      onWrite: (n) => { this.stats.bytesWritten += n; },
      onFate: (key, n, f) => {
        if (f === 'pass') return;
        this.faultLog.push({ t: Date.now() - this.startedAt, key, delivery: n, fate: f });
        if (this.faultLog.length > 300) this.faultLog.shift();
      },
      onCut: () => {
        this.stats.cuts++;
        const { outageMs } = this.getFaults();
        this.outageUntil = Date.now() + outageMs;
        this.log(`conn ${connNo}: connection cut by the fault injector${outageMs ? ` (outage ${outageMs} ms)` : ''}`);
      },
    });
  }

  // The client's catch-up (package catchUp()'s answer), then the heartbeat, and the connection's record.
  sendCatchUp(wire, connNo, position, { mode, events, activities = [] }, attached) {
    // The demo's wire meter reads this comment to tell catch-up bytes from live ones.
    const where = this.pkg.readResyncRequest(position);
    const since = where.lastSeq ?? '-';
    wire.control(`: catch-up ${connNo === 1 ? 'initial' : mode} ${events.length} since ${since}\n\n`);
    for (const ev of events) wire.send(...this.framed(ev));
    wire.control(': live\n\n');
    wire.control(this.emitter.heartbeat());
    this.log(`conn ${connNo}${attached ? ' (attach)' : ''}: client at seq ${since}${where.reason ? ` (${where.reason})` : ''} -> catch-up ${mode}${mode === 'replay' ? ` of ${events.length} events` : ''} (agent at seq ${this.emitter.seq})`);
    this.connLog.push({ connNo, t: Date.now() - this.startedAt, attached, lastSeq: where.lastSeq, reason: where.reason, mode, events: events.length, agentSeq: this.emitter.seq, activities });
    if (this.connLog.length > 100) this.connLog.shift();
  }

  // consumeApproval verifies as verifyApproval does and records the approval: the
  // same one sent again (a retry after a cut) gets the first decision back and
  // the payment is not made twice; effectKey is the payment's idempotency key.
  async approve(approval, pane) {
    const interruptId = typeof approval?.interruptId === 'string' && approval.interruptId ? approval.interruptId : undefined;
    // An approval of the checkout card names its activity (messageId): it is checked against the agent's content of it.
    const { activities } = this.emitter;
    const decision = await this.pkg.consumeApproval(approval, this.emitter.state, { store: this.approvalStore, threadId: this.threadId, interruptId, activities });
    const matched = decision.ok;
    const record = {
      pane: String(pane || 'unknown'),
      matched,
      executed: decision.ok && !decision.replayed,
      replayed: decision.replayed,
      effectKey: decision.effectKey,
      at: Date.now() - this.startedAt,
      agentSeq: this.emitter.seq,
      approvedSeq: approval && approval.seq != null ? approval.seq : null,
      path: approval && approval.path,
      messageId: typeof approval?.messageId === 'string' ? approval.messageId : null,
      agentValue: approval && typeof approval.path === 'string' ? valueAt(approvedDocument(this.emitter, approval), approval.path) : undefined,
      interruptId: approval && approval.interruptId != null ? approval.interruptId : null,
    };
    this.approvals.push(record);
    const verdict = !matched ? 'does NOT match the agent state, rejected'
      : decision.replayed ? 'already consumed: the first decision stands, not paid again' : 'MATCHES the agent state, executing';
    this.log(`approval from ${record.pane}: ${verdict}`);
    return record;
  }

  truthView() {
    return {
      threadId: this.threadId,
      runId: this.runId,
      parentRunId: this.parentRunId,
      epoch: this.emitter.epoch,
      logLength: this.thread.events.length,
      runs: this.thread.ends(),
      now: Date.now() - this.startedAt,
      seq: this.emitter.seq,
      digest: this.digest,
      finished: this.finished,
      streaming: this.openMessage, // the messageId of the answer being streamed, or null
      proposal: this.emitter.state.proposal ?? null,
      activities: this.activitiesView(),
      limit: this.emitter.state.budget ? this.emitter.state.budget.limit : null,
      edits: [...this.edits.values()],
      recent: this.truth.slice(-120),
      faults: this.faultLog.slice(-60),
      approvals: this.approvals,
      stats: this.stats,
      connections: this.connLog,
    };
  }
}

// What an approval is of: the agent's state, or its content of the activity the approval names.
function approvedDocument(emitter, approval) {
  return typeof approval.messageId === 'string' ? emitter.activities.content(approval.messageId) : emitter.state;
}

const isStateEvent = (ev) => ev.type.startsWith('STATE_') || ev.type.startsWith('ACTIVITY_');

function valueAt(state, path) {
  if (path === '') return state;
  let cur = state;
  for (const raw of path.split('/').slice(1)) {
    const k = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, k)) return undefined;
    cur = cur[k];
  }
  return cur;
}
