// An AG-UI agent run that outlives its connections (a resumable stream).
//
// The scripted agent works on its own clock; every connection that is attached
// gets the run's events through its own FaultyWire. A client that (re)connects
// says where its state is (X-AGUI-State-Seq / -Epoch / -Resync-Reason or
// Last-Event-ID headers, or RunAgentInput.forwardedProps.stateSync), and the
// package's catchUp() answers: nothing, the missed deltas (replay), or one
// snapshot. Then a heartbeat carrying the current seq, then the live stream.
import { randomBytes } from 'node:crypto';

import { applyClientEdits, describeResult } from './edits.mjs';
import { FaultyWire } from './faults.mjs';
import { buildScript, followUpScript, INITIAL_STATE } from './script.mjs';

const HEARTBEAT_MS = 1000;
const CHUNK_MS = 45; // spacing of TEXT_MESSAGE_CONTENT chunks
const frame = (event) => `data: ${JSON.stringify(event)}\n\n`;

export class AgentRun {
  static async create(options) {
    const emitter = await options.pkg.createStateEmitter({
      initialState: INITIAL_STATE,
      // Overwrites of the proposal carry `test` ops of the value they replace.
      guardedPaths: ['/proposal'],
      epoch: randomBytes(6).toString('hex'),
    });
    return new AgentRun(options, emitter);
  }

  constructor({ threadId, pkg, getFaults, stepMs = 180, log = () => {} }, emitter) {
    this.threadId = threadId;
    this.runId = `run-${randomBytes(4).toString('hex')}`;
    this.pkg = pkg;
    this.getFaults = getFaults;
    this.stepMs = stepMs;
    this.log = log;
    this.emitter = emitter;
    this.script = buildScript();
    this.pos = 0;
    this.eventIndex = 0;
    this.connSeq = 0;
    this.conns = new Set();
    this.deliveries = new Map();
    this.openMessage = null;
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

  start() {
    if (this.timer || this.finished) return;
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
    const text = frame(event);
    for (const c of this.conns) c.wire.spared(text);
  }

  emitState(events) {
    for (const ev of events) {
      this.broadcast(this.emitter.encode(ev), `${ev.type === 'STATE_SNAPSHOT' ? 'snap' : 's'}${ev.metadata.seq}`);
    }
    this.recordTruth();
  }

  heartbeat() {
    if (this.finished) return;
    const hb = this.emitter.heartbeat();
    for (const c of this.conns) c.wire.control(hb);
  }

  next() {
    this.timer = null;
    const beat = this.script[this.pos++];
    if (!beat) return;
    if (beat.say) { this.say(beat.say, () => this.schedule()); return; }
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
  // Before attach(): the user's edits in this RunAgentInput go to the emitter
  // (their ack delta is then part of this connection's catch-up), and a new
  // client runId on a finished thread starts the agent's follow-up run.
  receive(input) {
    const { events, results } = applyClientEdits(this.emitter, input);
    if (events.length) this.emitState(events);
    for (const r of results) {
      if (!this.edits.has(r.editId)) this.log(describeResult(r));
      this.edits.set(r.editId, r);
    }
    const runId = input && typeof input.runId === 'string' ? input.runId : null;
    if (!runId || this.clientRuns.has(runId)) return;
    this.clientRuns.add(runId);
    if (this.clientRuns.size > 1 && this.finished) this.followUp(results);
  }

  followUp(results) {
    this.runId = `run-${randomBytes(4).toString('hex')}`;
    this.finished = false;
    this.finishedEvent = null;
    const approved = this.approvals.some((a) => a.matched);
    this.script = followUpScript({ results, limit: this.emitter.state.budget.limit, approved });
    this.pos = 0;
    this.messagePrefix = `msg-${this.runId}-`;
    this.hbTimer = setInterval(() => this.heartbeat(), HEARTBEAT_MS);
    this.log(`follow-up run ${this.runId} (${results.length} edits with it)`);
  }

  // ---- connections ----------------------------------------------------------
  // Attach an HTTP response. `position` is what the package's catchUp() reads:
  // the request (its X-AGUI-State-* / Last-Event-ID headers) or the RunAgentInput.
  attach(res, position) {
    const connNo = ++this.connSeq;
    this.stats.connections++;
    const { mode, events: catchUp } = this.pkg.catchUp(this.emitter, position);
    this.stats.catchUps[mode] = (this.stats.catchUps[mode] || 0) + 1;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      [this.pkg.HEADER_CATCH_UP]: mode,
    });
    res.flushHeaders();
    const wire = new FaultyWire(res, {
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
    const conn = { wire, connNo };
    res.on('close', () => this.conns.delete(conn));

    wire.send(frame({ type: 'RUN_STARTED', threadId: this.threadId, runId: this.runId }), `start${connNo}`);
    // The demo's wire meter reads this comment to tell catch-up bytes from live ones.
    const where = this.pkg.readResyncRequest(position);
    const since = where.lastSeq ?? '-';
    wire.control(`: catch-up ${connNo === 1 ? 'initial' : mode} ${catchUp.length} since ${since}\n\n`);
    for (const ev of catchUp) {
      wire.send(this.emitter.encode(ev), `${ev.type === 'STATE_SNAPSHOT' ? 'snap' : 's'}${ev.metadata.seq}`);
    }
    wire.control(': live\n\n');
    wire.control(this.emitter.heartbeat());
    this.log(`conn ${connNo}: client at seq ${since}${where.reason ? ` (${where.reason})` : ''} -> catch-up ${mode}${mode === 'replay' ? ` of ${catchUp.length} deltas` : ''} (agent at seq ${this.emitter.seq})`);
    this.connLog.push({ connNo, t: Date.now() - this.startedAt, lastSeq: where.lastSeq, reason: where.reason, mode, events: catchUp.length, agentSeq: this.emitter.seq });
    if (this.connLog.length > 100) this.connLog.shift();

    if (this.finished) {
      wire.send(frame(this.finishedEvent), `fin${connNo}`);
      wire.finish();
      return conn;
    }
    if (this.openMessage) {
      // The message that was streaming when the client dropped: re-open it so
      // the stream stays a valid AG-UI sequence (START before CONTENT).
      wire.spared(frame({ type: 'TEXT_MESSAGE_START', messageId: this.openMessage, role: 'assistant' }));
    }
    this.conns.add(conn);
    this.start();
    return conn;
  }

  // consumeApproval verifies as verifyApproval does and records the approval: the
  // same one sent again (a retry after a cut) gets the first decision back and
  // the payment is not made twice; effectKey is the payment's idempotency key.
  async approve(approval, pane) {
    const interruptId = typeof approval?.interruptId === 'string' && approval.interruptId ? approval.interruptId : undefined;
    const decision = await this.pkg.consumeApproval(approval, this.emitter.state, { store: this.approvalStore, threadId: this.threadId, interruptId });
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
      agentValue: approval && typeof approval.path === 'string' ? valueAt(this.emitter.state, approval.path) : undefined,
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
      now: Date.now() - this.startedAt,
      seq: this.emitter.seq,
      digest: this.digest,
      finished: this.finished,
      proposal: this.emitter.state.proposal ?? null,
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
