// Checkpoints under random schedules (issue 16, section 1): an agent
// (StateEmitter) and a page (StateSync with persist) on a faulty link, random
// agent writes, user edits and runs that carry the pending edits, and a
// storage adapter that is slow (each write waits for the schedule), fails
// writes, and at reload points may hold a damaged checkpoint. At random
// points the page reloads: the old StateSync goes away with its write in
// flight landing or not, and a new one is created from the same storage.
//
// Invariants:
//  1. Storage only ever holds a whole checkpoint of a state the page had after
//     one of its calls (never a mix), and never more than one write is in flight.
//     If storage had caught up before the page went away, the checkpoint is the
//     page's last state exactly: nothing but the call in flight is ever lost.
//  2. A valid checkpoint comes back: confirmed state, lastSeq, epoch and the
//     pending edits (ids and ops) as stored; status 'resyncing' (restored), the
//     guard refusing; the server's catch-up for it is a replay (or nothing and
//     a heartbeat), never a snapshot, and it brings the page in step.
//  3. A damaged checkpoint is discarded with code invalid-checkpoint, deleted,
//     and the page starts fresh.
//  4. editIds are never reused, across reloads: a restored edit keeps its id,
//     a new one never takes an id seen before; the agent applies each once.
//  5. Once edits stop and the link heals, everything converges: no pending
//     edits, page and agent agree, and every edit that was not lost at a
//     reload (made after the last completed write, or in a damaged checkpoint)
//     is acked, rejected or lost to a conflict, and the app was told.
//
// PERSIST_SEED=n runs one schedule, PERSIST_SEEDS=n runs seeds 1..n,
// PERSIST_TRACE=1 prints what a schedule did.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { atStorage, ControlledStorage, corruptions, drain, KEY, readStored } from './persist-support.mjs';
import { jsDir, pkg, plain, rng } from './support.mjs';

const { createStateEmitter, createStateSync } = pkg;
const { catchUp } = await import(join(jsDir, 'src', 'server.js'));
const { setCatchUpHeaders } = await import(join(jsDir, 'src', 'client', 'reconnect.js'));
const { kCatchUpSnapshot } = await import(join(jsDir, 'src', 'engine', 'internals.js'));
const { REPLAY_REASONS } = await import(join(jsDir, 'src', 'engine', 'codes.js'));

const INITIAL = { agent: { x: 0 }, form: { note: 'n' }, shared: { a: 0, list: [] } };
const TRACE = Boolean(process.env.PERSIST_TRACE);
const trace = (...args) => {
  if (TRACE) console.error(...args);
};
const CORRUPTIONS = Object.values(corruptions);

// What a checkpoint holds, as one comparable string.
const viewKey = ({ lastSeq, epoch, lastEventId, edits, state }) => JSON.stringify([lastSeq, epoch, lastEventId, edits, state]);
const viewOf = (sync) => viewKey({
  lastSeq: sync.lastSeq, epoch: sync.epoch, lastEventId: sync.lastEventId,
  edits: plain(sync.pendingEdits()), state: sync.confirmedState,
});

class World {
  static async create(seed, advance) {
    const random = rng(seed);
    const pick = (n) => Math.floor(random() * n);
    const rules = { ownership: { '/agent': 'agent', '/form': 'user' }, onConflict: seed % 2 ? 'agent-wins' : 'user-wins' };
    // Replays are never refused for being long or costly: a valid checkpoint must always be answered by one.
    const emitter = await createStateEmitter({ initialState: INITIAL, epoch: `e${seed}`, digestEvery: 4, snapshotRatio: 100, replayMaxEvents: 100000 });
    const world = new World(pick, rules, emitter, advance);
    world.sync = await world.open();
    assert.equal(world.sync.persistence.restore, 'none');
    world.link.push(emitter.snapshot());
    world.deliverAll();
    return world;
  }

  constructor(pick, rules, emitter, advance) {
    Object.assign(this, { pick, rules, emitter, advance });
    this.storage = new ControlledStorage({ instant: false });
    this.link = []; // events (objects) and raw text (heartbeats) on their way to the page
    this.history = new Map([[emitter.seq, emitter.state]]);
    this.views = new Set(); // every checkpoint content the current page had after a call
    this.fates = new Map(); // editId -> 'pending' | 'acked' | 'rejected' | 'lost-to-agent' | 'dropped'
    this.verdicts = new Map(); // editId -> the agent's first verdict
    this.tally = { reloads: 0, restored: 0, discarded: 0, dropped: 0, replays: 0, failedWrites: 0 };
  }

  open() {
    return createStateSync({ ...this.rules, persist: { key: KEY, storage: this.storage, lockTimeoutMs: 0 } });
  }

  async step() {
    const r = this.pick(100);
    if (r < 25) this.agentWrite();
    else if (r < 40) this.userEdit();
    else if (r < 50) this.run(this.pick(5) === 0);
    else if (r < 80) this.deliver();
    else if (r < 93) await this.storageTick();
    else await this.reload();
  }

  agentWrite() {
    const list = this.emitter.state.shared.list;
    const r = this.pick(5);
    let ops;
    if (r === 0) ops = [{ op: 'replace', path: '/agent/x', value: this.pick(9) }];
    else if (r === 1) ops = [{ op: 'replace', path: '/shared/a', value: this.pick(4) }];
    else if (r === 2) ops = [{ op: 'replace', path: '/form/note', value: `a${this.pick(4)}` }];
    else if (r === 3 || list.length === 0) ops = [{ op: 'add', path: '/shared/list/-', value: this.pick(9) }];
    else ops = [{ op: 'remove', path: `/shared/list/${this.pick(list.length)}` }];
    trace('agent', JSON.stringify(ops));
    this.send(this.emitter.patch(ops));
  }

  userEdit() {
    const r = this.pick(3);
    const ops = r === 0 ? [{ op: 'replace', path: '/form/note', value: `u${this.pick(4)}` }]
      : r === 1 ? [{ op: 'replace', path: '/shared/a', value: 10 + this.pick(4) }]
        : [{ op: 'add', path: '/shared/list/-', value: 100 + this.pick(9) }];
    const result = this.sync.edit(ops);
    this.noteView();
    if (!result.ok) return;
    trace('edit', result.editId, JSON.stringify(ops));
    assert.ok(!this.fates.has(result.editId), `editId ${result.editId} is new (invariant 4)`);
    this.fates.set(result.editId, 'pending');
  }

  // A run: the pending edits travel to the agent (unless the request is lost).
  run(lost) {
    const requests = this.sync.pendingEdits();
    if (lost || requests.length === 0) return;
    trace('run with', requests.map((e) => e.editId).join(' '));
    const { events, results } = this.emitter.applyEdits(requests, this.rules);
    for (const verdict of results) {
      const known = this.verdicts.get(verdict.editId);
      if (known) assert.deepEqual([verdict.status, verdict.seq], [known.status, known.seq], `edit ${verdict.editId} judged once`);
      else this.verdicts.set(verdict.editId, verdict);
    }
    this.send(events);
  }

  send(events) {
    for (const event of events) {
      this.history.set(event.metadata['agui-state-sync'].seq, this.emitter.state);
      this.link.push(event);
    }
  }

  deliver() {
    if (this.link.length === 0) return;
    const fault = this.pick(100);
    if (fault < 6) this.link.shift();
    else if (fault < 11) this.link.unshift(this.link[0]);
    else if (fault < 16 && this.link.length > 1) [this.link[0], this.link[1]] = [this.link[1], this.link[0]];
    else if (fault < 19) return this.cut();
    for (let n = 1 + this.pick(3); n > 0 && this.link.length > 0; n--) this.feed(this.link.shift());
    if (this.sync.status === 'resyncing') this.cut();
  }

  deliverAll() {
    while (this.link.length > 0) this.feed(this.link.shift());
  }

  cut() {
    this.observe(this.sync.end());
    this.noteView();
    this.sync.reset();
    this.connect();
  }

  // A (re)connection: the server's catchUp() for the headers the client sends.
  connect() {
    const request = this.sync.resyncRequest();
    const position = { lastSeq: this.sync.lastSeq, epoch: this.sync.epoch, reason: request?.reason ?? null, held: request?.held ?? [], lastEventId: null };
    const { mode, events } = catchUp(this.emitter, { headers: setCatchUpHeaders(new Headers(), position) });
    this.link = mode === 'current' ? [this.emitter.heartbeat()] : [...events]; // writeCatchUp's heartbeat
    return mode;
  }

  feed(item) {
    const outcomes = this.sync.feed(typeof item === 'string' ? item : this.emitter.encode(item));
    this.observe(outcomes);
    this.noteView();
  }

  observe(outcomes) {
    for (const o of outcomes) {
      const fate = this.fates.get(o.editId);
      // An edit lost to a conflict locally may still have been applied by an earlier run: its ack comes late.
      if (o.kind === 'edit-acked') assert.ok(fate === 'pending' || fate === 'lost-to-agent', `ack of edit ${o.editId} (${fate})`);
      else if (o.kind === 'edit-rejected' || o.kind === 'conflict') assert.equal(fate, 'pending', `${o.kind} of edit ${o.editId}`);
      if (o.kind === 'edit-acked') this.fates.set(o.editId, 'acked');
      else if (o.kind === 'edit-rejected') this.fates.set(o.editId, 'rejected');
      else if (o.kind === 'conflict' && o.resolution === 'agent-wins') this.fates.set(o.editId, 'lost-to-agent');
    }
  }

  noteView() {
    this.views.add(viewOf(this.sync));
  }

  // Storage answers the write in flight, if any: most land, some fail.
  async storageTick() {
    await this.writerSettles();
    if (this.storage.pending.length === 0) return;
    const fate = this.pick(5) === 0 ? 'fail' : 'commit';
    if (fate === 'fail') this.tally.failedWrites++;
    this.storage.settle(fate);
  }

  // Waits until the writer has a write at storage or is idle: the schedule
  // never depends on how fast the digest was computed.
  async writerSettles() {
    await atStorage([this.sync], this.storage);
  }

  // The page goes away (after storage caught up, or with a write in flight
  // that lands or not); storage may be damaged; a new page opens.
  async reload() {
    this.tally.reloads++;
    const caughtUp = this.pick(2) === 0;
    if (caughtUp) await drain(this.sync, this.storage, () => 'commit', this.advance);
    const last = viewOf(this.sync);
    const pending = this.sync.pendingEdits().map((e) => e.editId);
    this.sync.dispose();
    await drain(this.sync, this.storage, () => (this.pick(2) ? 'commit' : 'fail'), this.advance);
    let damaged = false;
    if (this.storage.entries.has(KEY) && this.pick(6) === 0) {
      damaged = true;
      this.storage.entries.set(KEY, CORRUPTIONS[this.pick(CORRUPTIONS.length)](this.storage.entries.get(KEY), this.pick));
    }
    const readable = readStored(this.storage.entries.get(KEY));
    const stored = readable?.key === KEY ? readable : null; // a checkpoint of another key is damage too
    trace('reload', caughtUp ? '(caught up)' : '', damaged ? '(damaged)' : '', stored ? `checkpoint at seq ${stored.lastSeq}` : 'no checkpoint');
    if (stored) assert.ok(this.views.has(viewKey(stored)), 'the checkpoint is a state the page had (invariant 1)');
    if (caughtUp && !damaged) assert.equal(viewKey(stored), last, 'storage had caught up: nothing lost (invariant 1)');
    this.sync = await this.open();
    this.views = new Set([viewOf(this.sync)]);
    const kept = stored ? new Set(stored.edits.map((e) => e.editId)) : new Set();
    // The new page is a new app instance: it hears the fate of every edit it restored, even one the old page heard of already.
    for (const id of kept) this.fates.set(id, 'pending');
    for (const id of pending) {
      if (!kept.has(id)) {
        this.fates.set(id, 'dropped');
        this.tally.dropped++;
      }
    }
    if (stored) await this.checkRestored(stored);
    else this.checkFresh(damaged);
  }

  // Invariant 2.
  async checkRestored(stored) {
    this.tally.restored++;
    const { sync } = this;
    assert.equal(sync.persistence.restore, 'restored');
    assert.deepEqual([sync.lastSeq, sync.epoch, sync.lastEventId], [stored.lastSeq, stored.epoch, stored.lastEventId]);
    assert.deepEqual(plain(sync.confirmedState), stored.state);
    assert.deepEqual(plain(sync.pendingEdits()), stored.edits, 'the pending edits, ids and ops');
    assert.equal(sync.status, 'resyncing');
    assert.equal(sync.resyncRequest().reason, 'restored');
    assert.equal(sync.guard.blocker(), 'resyncing');
    const mode = this.connect();
    if (stored.lastSeq !== null) {
      assert.notEqual(mode, 'snapshot', 'a restored page is caught up by replay (invariant 2)');
      this.tally.replays += mode === 'replay' ? 1 : 0;
    }
    this.deliverAll();
    assert.equal(sync.status, 'synced');
    assert.deepEqual(plain(sync.confirmedState), this.history.get(sync.lastSeq), 'in step with the agent at lastSeq');
    assert.equal(sync.lastSeq, this.emitter.seq);
    if (stored.lastSeq !== null) assert.equal(sync.metrics().snapshots, 0);
  }

  // Invariant 3 (or nothing was ever stored).
  checkFresh(damaged) {
    const { persistence } = this.sync;
    if (damaged || persistence.restore === 'discarded') {
      this.tally.discarded++;
      assert.equal(persistence.restore, 'discarded');
      assert.equal(persistence.error.code, 'invalid-checkpoint');
      assert.equal(this.storage.entries.has(KEY), false, 'deleted');
    } else assert.equal(persistence.restore, 'none');
    assert.deepEqual([this.sync.status, this.sync.lastSeq, this.sync.pendingEdits().length], ['unverified', null, 0]);
    this.connect();
    this.deliverAll();
  }

  // Edits stop; the link heals; storage catches up.
  async heal() {
    for (let round = 0; round < 40; round++) {
      this.deliverAll();
      if (this.sync.status !== 'synced' || this.sync.lastSeq !== this.emitter.seq) {
        this.connect();
        continue;
      }
      if (this.sync.pendingEdits().length === 0) break;
      this.run(false);
    }
    await drain(this.sync, this.storage, () => 'commit', this.advance);
  }

  // Invariant 5.
  checkConverged() {
    assert.deepEqual(this.sync.pendingEdits(), []);
    assert.equal(this.sync.status, 'synced');
    assert.deepEqual(plain(this.sync.state), this.emitter.state, 'page and agent agree');
    for (const [id, fate] of this.fates) assert.notEqual(fate, 'pending', `edit ${id} is settled`);
    assert.equal(viewKey(readStored(this.storage.entries.get(KEY))), viewOf(this.sync), 'the last checkpoint is the last state');
    assert.ok(this.storage.maxPending <= 1, 'never two writes in flight');
  }

  dispose() {
    this.sync.dispose();
    this.emitter.dispose();
  }
}

function seeds() {
  const only = process.env.PERSIST_SEED;
  if (only) return [Number(only), Number(only)];
  return [1, Number(process.env.PERSIST_SEEDS ?? 3000)];
}

test('persist property: reloads at random points restore, replay and converge; damaged checkpoints are discarded', { timeout: 600000 }, async (t) => {
  // The writer's retry delays run on a mocked clock (drain() advances it).
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const advance = (ms) => t.mock.timers.tick(ms);
  const [first, last] = seeds();
  const started = performance.now();
  const tally = { reloads: 0, restored: 0, discarded: 0, dropped: 0, replays: 0, failedWrites: 0, edits: 0, acked: 0 };
  for (let seed = first; seed <= last; seed++) {
    const world = await World.create(seed, advance);
    try {
      const steps = 20 + (seed % 41);
      for (let i = 0; i < steps; i++) await world.step();
      await world.heal();
      world.checkConverged();
      for (const [name, n] of Object.entries(world.tally)) tally[name] += n;
      tally.edits += world.fates.size;
      tally.acked += [...world.fates.values()].filter((fate) => fate === 'acked').length;
    } catch (error) {
      error.message = `seed ${seed} (PERSIST_SEED=${seed} PERSIST_TRACE=1 to replay): ${error.message}`;
      throw error;
    } finally {
      world.dispose();
    }
  }
  const seconds = (performance.now() - started) / 1000;
  t.diagnostic(`${last - first + 1} schedules in ${seconds.toFixed(1)} s: ${JSON.stringify(tally)}`);
  if (last - first >= 500) {
    // The schedules do reach every case.
    for (const name of ['restored', 'discarded', 'dropped', 'replays', 'failedWrites', 'acked']) assert.ok(tally[name] > 0, `${name}: ${JSON.stringify(tally)}`);
  }
});
