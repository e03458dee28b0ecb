// User edits under random schedules, through WASM (issue 14, section 4): the
// JS twin of tests/native/test_edits_property.cpp, step for step (same
// paths, same odds, same faults, same invariants), so the two can be read
// side by side. An agent (StateEmitter) and a client (StateSync) on a faulty
// link: random agent writes, random user edits on agent-owned, user-owned and
// shared paths (an array among them), runs that carry the pending edits to
// emitter.applyEdits (sometimes lost), both conflict policies, and faults:
// drop, duplicate, reorder, and a cut answered by a catch-up (replay or
// snapshot). 10,000 seeded schedules per run.
//
// Invariants:
//  1. Every edit ends as edit-acked, with its effect in the agent's state at
//     that seq, or as edit-rejected / conflict (agent-wins) reported to the
//     app; never silently gone, never applied twice (a fresh 'applied'
//     verdict at most once per editId).
//  2. Under user-wins no edit is rejected for a conflict.
//  3. Whenever the status is synced, confirmedState is the agent's state at
//     lastSeq, and state is confirmedState with pendingEdits() replayed (the
//     ones that apply; the others provably do not).
//  4. Once edits stop and the link heals, everything converges: no pending
//     edits, and client and agent agree.
// Beyond the native test, every feed also checks the JS mirrors against the
// engine (both states, the pending list) and that outcome.state of the last
// applied outcome is sync.state.
//
// EDITS_SEED=n runs one schedule, EDITS_SEEDS=n runs seeds 1..n, EDITS_TRACE=1
// prints what a schedule did.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { referenceApply } from './edits-support.mjs';
import { jsDir, kInternals, pkg, plain, rng } from './support.mjs';

const { createStateEmitter, createStateSync } = pkg;
const { kCatchUpSnapshot } = await import(join(jsDir, 'src', 'engine', 'internals.js'));
const { REPLAY_REASONS } = await import(join(jsDir, 'src', 'engine', 'codes.js'));

const PATHS = ['/agent/x', '/form/note', '/shared/a', '/shared/b'];
const INITIAL = { agent: { x: 0 }, form: { note: 'n' }, shared: { a: 0, b: 0, list: [] } };
const TRACE = Boolean(process.env.EDITS_TRACE);
const trace = (...args) => {
  if (TRACE) console.error(...args);
};

const valueAt = (doc, pointer) => pointer.slice(1).split('/').reduce((node, key) => node?.[key], doc);
const counterOf = (editId) => Number(editId.slice(editId.lastIndexOf(':') + 1));

class World {
  static async create(seed, onConflict) {
    const random = rng(seed);
    const pick = (n) => Math.floor(random() * n);
    const rules = { ownership: { '/agent': 'agent', '/form': 'user' }, onConflict };
    const emitter = await createStateEmitter({
      initialState: INITIAL,
      epoch: `e${seed}`,
      snapshotRatio: pick(2) ? 0.8 : 100, // small states: 0.8 sends many fallback snapshots
      digestEvery: 4,
      editHistory: pick(4) === 0 ? 3 : 4096, // a short history: edits past it count as conflicting
    });
    const sync = await createStateSync({ ...rules, clientId: 'tab' });
    return new World(pick, onConflict, rules, emitter, sync);
  }

  constructor(pick, onConflict, rules, emitter, sync) {
    Object.assign(this, { pick, onConflict, rules, emitter, sync });
    this.link = [];
    this.history = new Map([[emitter.seq, emitter.state]]);
    this.fates = new Map(); // editId -> 'pending' | 'acked' | 'rejected' | 'lost-to-agent'
    this.editOps = new Map();
    this.verdicts = new Map(); // editId -> { applied, reason, seq }: the agent's first verdict
    this.rejectedFor = new Map();
    this.pendingChecks = [];
    this.cuts = 0;
    this.link.push(emitter.snapshot());
    this.deliverAll();
  }

  dispose() {
    this.sync.dispose();
    this.emitter.dispose();
  }

  step() {
    const r = this.pick(100);
    if (r < 30) this.agentWrite();
    else if (r < 55) this.userEdit();
    else if (r < 68) this.run(this.pick(5) === 0);
    else this.deliver();
  }

  // Edits stop; the link heals.
  heal() {
    for (let round = 0; round < 40; round++) {
      this.deliverAll();
      if (this.sync.status !== 'synced' || this.sync.lastSeq !== this.emitter.seq) {
        this.catchUp(); // what a heartbeat or the next reconnect would reveal
        continue;
      }
      if (this.sync.pendingEdits().length === 0) break;
      this.run(false);
    }
  }

  checkConverged() {
    assert.deepEqual(this.sync.pendingEdits(), [], 'no pending edits');
    assert.equal(this.sync.status, 'synced');
    assert.deepEqual(plain(this.sync.state), this.emitter.state, 'client and agent agree');
    assert.equal(this.sync.state, this.sync.confirmedState);
    for (const [id, fate] of this.fates) {
      assert.notEqual(fate, 'pending', `edit ${id} is settled`);
      // The agent applied it: the app was told so (late, after a lost conflict, if need be).
      if (this.verdicts.get(id)?.applied) assert.equal(fate, 'acked', `edit ${id}`);
      if (fate === 'rejected' && this.onConflict === 'user-wins') assert.notEqual(this.rejectedFor.get(id), 'conflict', `edit ${id}`);
    }
  }

  agentWrite() {
    const r = this.pick(6);
    const list = this.emitter.state.shared.list;
    let ops;
    if (r < 4) ops = [{ op: 'replace', path: PATHS[r], value: this.pick(4) }];
    else if (r === 4 || list.length === 0) ops = [{ op: 'add', path: '/shared/list/0', value: this.pick(9) }];
    else ops = [{ op: 'remove', path: `/shared/list/${this.pick(list.length)}` }];
    trace('agent', JSON.stringify(ops), 'at seq', this.emitter.seq + 1);
    this.send(this.emitter.patch(ops));
  }

  // The same edits as the native test: a replace (with a `test` of the visible
  // value, sometimes) of one path, an append, a remove, or a two-path edit.
  userEditOps(r) {
    const visible = this.sync.state;
    if (r < 4) {
      const ops = [];
      if (this.pick(3) === 0) ops.push({ op: 'test', path: PATHS[r], value: valueAt(visible, PATHS[r]) ?? null });
      ops.push({ op: 'replace', path: PATHS[r], value: `u${this.pick(4)}` });
      return ops;
    }
    if (r === 4) return [{ op: 'add', path: '/shared/list/-', value: 100 + this.pick(9) }];
    if (r === 5) return [{ op: 'remove', path: '/shared/list/0' }];
    return [{ op: 'replace', path: '/form/note', value: `f${this.pick(4)}` }, { op: 'replace', path: '/shared/b', value: 'f' }];
  }

  userEdit() {
    const r = this.pick(7);
    const ops = this.userEditOps(r);
    const visible = this.sync.state;
    const result = this.sync.edit(ops);
    if (!result.ok) {
      assert.equal(this.sync.state, visible, 'refused: nothing changed');
      if (r === 0) assert.equal(result.reason, 'agent-owned');
      return;
    }
    assert.notEqual(r, 0, 'an agent-owned path is never edited');
    assert.ok(!this.fates.has(result.editId), 'editIds are unique');
    trace('edit', result.editId, 'base', this.sync.lastSeq, JSON.stringify(ops));
    this.fates.set(result.editId, 'pending');
    this.editOps.set(result.editId, ops);
    this.checkLayers();
  }

  // A run: the pending edits travel to the agent (unless the request is lost).
  run(lost) {
    const requests = this.sync.pendingEdits();
    trace('run', lost ? '(lost)' : '', 'with', requests.length, 'edits');
    if (lost || requests.length === 0) return;
    const { events, results } = this.emitter.applyEdits(requests, this.rules);
    assert.equal(results.length, requests.length);
    for (const verdict of results) this.judge(verdict);
    this.send(events);
  }

  // The agent's verdicts: the first one stands; an applied edit's value is in
  // the state at its seq.
  judge(verdict) {
    const { editId } = verdict;
    assert.ok(Number.isSafeInteger(verdict.seq), `edit ${editId} has a seq`);
    const applied = verdict.status === 'applied';
    const known = this.verdicts.get(editId);
    if (known) { // re-sent: the same verdict, never a second application
      assert.equal(applied, known.applied, `edit ${editId}`);
      assert.equal(verdict.seq, known.seq, `edit ${editId}`);
      return;
    }
    this.verdicts.set(editId, { applied, reason: verdict.reason, seq: verdict.seq });
    if (!applied && this.onConflict === 'user-wins') assert.notEqual(verdict.reason, 'conflict', `edit ${editId}`);
    if (applied) this.pendingChecks.push(editId);
  }

  send(events) {
    for (const event of events) {
      this.history.set(event.metadata['agui-state-sync'].seq, this.emitter.state);
      this.link.push(event);
    }
    this.checkAppliedValues();
  }

  // An applied edit's replaces of object members hold in the state at its seq,
  // unless a later edit of the same event wrote the same path.
  checkAppliedValues() {
    for (const id of this.pendingChecks) {
      const { seq } = this.verdicts.get(id);
      for (const op of this.editOps.get(id)) {
        if (op.op !== 'replace' || op.path === '/shared/list/0' || this.writtenLater(id, seq, op.path)) continue;
        assert.deepEqual(valueAt(this.history.get(seq), op.path), op.value, `edit ${id} at seq ${seq}`);
      }
    }
    this.pendingChecks = [];
  }

  writtenLater(id, seq, path) {
    for (const [other, v] of this.verdicts) {
      if (v.seq !== seq || !v.applied || counterOf(other) <= counterOf(id)) continue;
      if (this.editOps.get(other).some((op) => op.path === path)) return true;
    }
    return false;
  }

  deliver() {
    if (this.link.length === 0) return;
    const fault = this.pick(100);
    if (fault < 5) this.link.shift();
    else if (fault < 10) this.link.unshift(this.link[0]);
    else if (fault < 15 && this.link.length > 1) [this.link[0], this.link[1]] = [this.link[1], this.link[0]];
    else if (fault < 18) return this.cut();
    for (let n = 1 + this.pick(3); n > 0 && this.link.length > 0; n--) this.feed(this.link.shift());
    if (this.sync.status === 'resyncing') this.cut();
  }

  deliverAll() {
    while (this.link.length > 0) this.feed(this.link.shift());
  }

  // The connection breaks; the client reconnects and catches up.
  cut() {
    trace('cut');
    this.cuts++;
    this.observe(this.sync.end());
    this.sync.reset();
    this.link = [];
    this.catchUp();
  }

  catchUp() {
    const request = this.sync.resyncRequest();
    const last = this.sync.lastSeq;
    const replay = last !== null && (request === null || REPLAY_REASONS.includes(request.reason));
    const events = replay
      ? this.emitter.replaySince(last, this.sync.epoch, request?.held ?? [])
      : [this.emitter[kCatchUpSnapshot]()];
    this.link = [...events];
  }

  feed(event) {
    const bytes = this.emitter.encode(event);
    trace('feed', bytes.trim());
    const outcomes = this.sync.feed(bytes);
    this.observe(outcomes);
    const applied = outcomes.filter((o) => o.kind === 'applied');
    if (applied.length > 0) assert.equal(applied.at(-1).state, this.sync.state, 'the last outcome\'s state is sync.state');
    this.checkLayers();
  }

  observe(outcomes) {
    for (const o of outcomes) {
      trace('  ->', o.kind, o.editId ?? '', o.path ?? '');
      if (o.kind === 'edit-acked') this.onAcked(o);
      else if (o.kind === 'edit-rejected') this.onRejected(o);
      else if (o.kind === 'conflict') this.onConflictOutcome(o);
    }
  }

  onAcked(o) {
    const fate = this.fates.get(o.editId);
    assert.ok(fate === 'pending' || fate === 'lost-to-agent', `ack of edit ${o.editId} (${fate})`);
    const verdict = this.verdicts.get(o.editId);
    assert.ok(verdict?.applied, `edit ${o.editId} acked: the agent applied it`);
    assert.equal(o.seq, verdict.seq);
    this.fates.set(o.editId, 'acked');
  }

  onRejected(o) {
    assert.equal(this.fates.get(o.editId), 'pending', `rejection of edit ${o.editId}`);
    const verdict = this.verdicts.get(o.editId);
    assert.ok(verdict && !verdict.applied, `edit ${o.editId} rejected: the agent refused it`);
    assert.equal(o.reason, verdict.reason);
    this.rejectedFor.set(o.editId, o.reason);
    this.fates.set(o.editId, 'rejected');
  }

  onConflictOutcome(o) {
    assert.equal(this.fates.get(o.editId), 'pending', `conflict of edit ${o.editId}`);
    assert.equal(o.resolution, this.onConflict);
    if (this.onConflict === 'agent-wins') this.fates.set(o.editId, 'lost-to-agent');
  }

  // Invariant 3, and the JS mirrors against the engine.
  checkLayers() {
    const { facade } = this.sync[kInternals]();
    const engine = JSON.parse(facade.pendingEditsJson());
    assert.deepEqual(plain(this.sync.confirmedState), JSON.parse(facade.stateJson()), 'confirmed mirror');
    assert.deepEqual(plain(this.sync.state), JSON.parse(facade.visibleStateJson()), 'visible mirror');
    const pending = this.sync.pendingEdits();
    assert.deepEqual(pending.map((e) => e.editId), engine.map((e) => e.editId));
    if (pending.length === 0) assert.equal(this.sync.state, this.sync.confirmedState);
    if (this.sync.status !== 'synced') return;
    assert.deepEqual(plain(this.sync.confirmedState), this.history.get(this.sync.lastSeq), 'confirmed = the agent at lastSeq');
    let replayed = plain(this.sync.confirmedState);
    pending.forEach((edit, i) => {
      const next = referenceApply(replayed, edit.ops);
      assert.equal(next !== null, engine[i].applies, `edit ${edit.editId} applies`);
      if (next !== null) replayed = next;
    });
    assert.deepEqual(plain(this.sync.state), replayed, 'state = confirmedState + pending edits');
  }
}

function seeds() {
  const only = process.env.EDITS_SEED;
  if (only) return [Number(only), Number(only)];
  return [1, Number(process.env.EDITS_SEEDS ?? 10000)];
}

test('edits property: 10,000 schedules with faults keep every edit accounted for (through WASM)', { timeout: 600000 }, async (t) => {
  const [first, last] = seeds();
  const started = performance.now();
  const tally = { edits: 0, acked: 0, rejected: 0, lost: 0, cuts: 0 };
  for (let seed = first; seed <= last; seed++) {
    const onConflict = seed % 2 ? 'agent-wins' : 'user-wins';
    const world = await World.create(seed, onConflict);
    try {
      const steps = 10 + (seed % 31);
      for (let i = 0; i < steps; i++) world.step();
      world.heal();
      world.checkConverged();
      tally.cuts += world.cuts;
      for (const fate of world.fates.values()) {
        tally.edits++;
        if (fate === 'acked') tally.acked++;
        else if (fate === 'rejected') tally.rejected++;
        else tally.lost++;
      }
    } catch (error) {
      error.message = `seed ${seed} (${onConflict}; EDITS_SEED=${seed} EDITS_TRACE=1 to replay): ${error.message}`;
      throw error;
    } finally {
      world.dispose();
    }
  }
  const seconds = (performance.now() - started) / 1000;
  t.diagnostic(`${last - first + 1} schedules in ${seconds.toFixed(1)} s; edits ${JSON.stringify(tally)}`);
  // The schedules do exercise every ending.
  if (last - first >= 1000) {
    assert.ok(tally.acked > 0 && tally.rejected > 0 && tally.lost > 0, JSON.stringify(tally));
  }
});
