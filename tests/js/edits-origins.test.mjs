// User edits from two clients (two editId origins) through one agent, under
// random schedules, through WASM: what edits-property.test.mjs (one client,
// the native twin) does not reach. The agent writes more ways than it does:
// whole-subtree update()s (diffed, or a fallback snapshot), removals and
// re-adds, moves; the users replace, add and remove. Each client has its own
// faulty link (drop, duplicate, reorder, cut with a replay or snapshot
// catch-up) and its own lost runs. For each client, as in the property test:
// every edit ends acked (and then the agent applied it), rejected or lost to
// the agent, reported; never twice; no conflict rejection under user-wins;
// when synced, confirmedState is the agent's state at lastSeq and state is it
// with the pending edits that apply; after healing, both clients equal the agent.
//
// ORIGINS_SEEDS=n runs seeds 1..n (default 4,000).
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
const valueAt = (doc, pointer) => pointer.slice(1).split('/').reduce((node, key) => node?.[key], doc);

// One client: its StateSync, its link, and what it was told about its edits.
class Client {
  constructor(name, sync, world) {
    Object.assign(this, { name, sync, world, link: [], fates: new Map() });
  }

  edit() {
    const { pick } = this.world;
    const k = pick(6);
    let ops;
    if (k < 4) ops = [{ op: pick(2) ? 'replace' : 'add', path: PATHS[k], value: `${this.name}${pick(4)}` }];
    else if (k === 4) ops = [{ op: 'add', path: '/shared/list/-', value: pick(9) }];
    else ops = [{ op: 'remove', path: '/shared/a' }];
    const visible = this.sync.state;
    const result = this.sync.edit(ops);
    if (!result.ok) {
      assert.equal(this.sync.state, visible, 'refused: nothing changed');
      if (k === 0) assert.equal(result.reason, 'agent-owned');
      return;
    }
    assert.notEqual(k, 0);
    this.fates.set(result.editId, 'pending');
  }

  run(lost) {
    const edits = this.sync.pendingEdits();
    if (lost || edits.length === 0) return;
    const { events, results } = this.world.emitter.applyEdits(edits, this.world.rules);
    for (const verdict of results) this.world.judge(verdict);
    this.world.send(events);
  }

  deliver() {
    if (this.link.length === 0) return;
    const fault = this.world.pick(100);
    if (fault < 5) this.link.shift();
    else if (fault < 10) this.link.unshift(this.link[0]);
    else if (fault < 15 && this.link.length > 1) [this.link[0], this.link[1]] = [this.link[1], this.link[0]];
    else if (fault < 18) return this.cut();
    for (let n = 1 + this.world.pick(3); n > 0 && this.link.length > 0; n--) this.feed(this.link.shift());
    if (this.sync.status === 'resyncing') this.cut();
  }

  deliverAll() {
    while (this.link.length > 0) this.feed(this.link.shift());
  }

  cut() {
    this.observe(this.sync.end());
    this.sync.reset();
    this.catchUp();
  }

  catchUp() {
    const { emitter } = this.world;
    const request = this.sync.resyncRequest();
    const last = this.sync.lastSeq;
    const replay = last !== null && (request === null || REPLAY_REASONS.includes(request.reason));
    this.link = replay ? emitter.replaySince(last, this.sync.epoch, request?.held ?? []) : [emitter[kCatchUpSnapshot]()];
  }

  feed(event) {
    this.observe(this.sync.feed(this.world.emitter.encode(event)));
    this.checkLayers();
  }

  observe(outcomes) {
    for (const o of outcomes) {
      if (o.kind !== 'edit-acked' && o.kind !== 'edit-rejected' && o.kind !== 'conflict') continue;
      const fate = this.fates.get(o.editId);
      const verdict = this.world.verdicts.get(o.editId);
      if (o.kind === 'edit-acked') {
        assert.ok(fate === 'pending' || fate === 'lost', `ack of ${o.editId} (${fate})`);
        assert.ok(verdict?.applied && verdict.seq === o.seq, `${o.editId} acked as the agent applied it`);
        this.fates.set(o.editId, 'acked');
      } else if (o.kind === 'edit-rejected') {
        assert.equal(fate, 'pending', `rejection of ${o.editId}`);
        assert.ok(verdict && !verdict.applied && verdict.reason === o.reason, `${o.editId} rejected as the agent did`);
        this.fates.set(o.editId, 'rejected');
      } else {
        assert.equal(fate, 'pending', `conflict of ${o.editId}`);
        assert.equal(o.resolution, this.world.rules.onConflict);
        if (o.resolution === 'agent-wins') this.fates.set(o.editId, 'lost');
      }
    }
  }

  checkLayers() {
    const { facade } = this.sync[kInternals]();
    assert.deepEqual(plain(this.sync.state), JSON.parse(facade.visibleStateJson()), `${this.name}: visible mirror`);
    assert.deepEqual(plain(this.sync.confirmedState), JSON.parse(facade.stateJson()), `${this.name}: confirmed mirror`);
    if (this.sync.status !== 'synced') return;
    assert.deepEqual(plain(this.sync.confirmedState), this.world.history.get(this.sync.lastSeq), `${this.name}: the agent at lastSeq`);
    let replayed = plain(this.sync.confirmedState);
    for (const edit of this.sync.pendingEdits()) replayed = referenceApply(replayed, edit.ops) ?? replayed;
    assert.deepEqual(plain(this.sync.state), replayed, `${this.name}: confirmed + pending edits`);
  }

  checkConverged() {
    assert.deepEqual(this.sync.pendingEdits(), [], `${this.name}: nothing pending`);
    assert.deepEqual(plain(this.sync.state), this.world.emitter.state, `${this.name}: equals the agent`);
    for (const [id, fate] of this.fates) {
      assert.notEqual(fate, 'pending', `${id} settled`);
      if (this.world.verdicts.get(id)?.applied) assert.equal(fate, 'acked', `${id}: applied, so acked`);
    }
  }
}

class World {
  static async create(seed) {
    const random = rng(seed);
    const pick = (n) => Math.floor(random() * n);
    const rules = { ownership: { '/agent': 'agent', '/form': 'user' }, onConflict: seed % 2 ? 'agent-wins' : 'user-wins' };
    const emitter = await createStateEmitter({ initialState: INITIAL, epoch: 'e', snapshotRatio: pick(2) ? 0.8 : 100, digestEvery: 4 });
    const world = new World(pick, rules, emitter);
    for (const name of ['A', 'B']) world.clients.push(new Client(name, await createStateSync({ ...rules, clientId: name }), world));
    world.send([emitter.snapshot()]);
    for (const client of world.clients) client.deliverAll();
    return world;
  }

  constructor(pick, rules, emitter) {
    Object.assign(this, { pick, rules, emitter, clients: [], verdicts: new Map() });
    this.history = new Map([[emitter.seq, emitter.state]]);
  }

  dispose() {
    for (const client of this.clients) client.sync.dispose();
    this.emitter.dispose();
  }

  send(events) {
    for (const event of events) {
      this.history.set(event.metadata['agui-state-sync'].seq, this.emitter.state);
      for (const client of this.clients) client.link.push(event);
    }
  }

  // The first verdict stands: a re-sent edit gets it again, never a second application.
  judge(verdict) {
    const applied = verdict.status === 'applied';
    const known = this.verdicts.get(verdict.editId);
    if (known) {
      assert.deepEqual([applied, verdict.seq], [known.applied, known.seq], `${verdict.editId} judged once`);
      return;
    }
    if (!applied && this.rules.onConflict === 'user-wins') assert.notEqual(verdict.reason, 'conflict', verdict.editId);
    this.verdicts.set(verdict.editId, { applied, reason: verdict.reason, seq: verdict.seq });
  }

  agentWrite() {
    const state = this.emitter.state;
    const k = this.pick(7);
    const next = structuredClone(state);
    if (k === 0) next.shared = { a: this.pick(3), b: this.pick(3), list: [this.pick(3)] };
    else if (k === 1) {
      if ('a' in next.shared) delete next.shared.a;
      else next.shared.a = this.pick(3);
    } else if (k === 2) next.form.note = `agent${this.pick(3)}`;
    if (k <= 2) return this.send(this.emitter.update(next));
    if (k === 3 && 'b' in state.shared) return this.send(this.emitter.patch([{ op: 'move', from: '/shared/b', path: '/shared/c' }]));
    if (k === 4 && 'c' in state.shared) return this.send(this.emitter.patch([{ op: 'move', from: '/shared/c', path: '/shared/b' }]));
    const path = PATHS[this.pick(4)];
    const op = valueAt(state, path) === undefined ? 'add' : 'replace';
    return this.send(this.emitter.patch([{ op, path, value: this.pick(4) }]));
  }

  step() {
    const client = this.clients[this.pick(2)];
    const r = this.pick(100);
    if (r < 25) this.agentWrite();
    else if (r < 55) client.edit();
    else if (r < 70) client.run(this.pick(5) === 0);
    else client.deliver();
  }

  heal() {
    for (let round = 0; round < 60; round++) {
      let quiet = true;
      for (const client of this.clients) {
        client.deliverAll();
        if (client.sync.status !== 'synced' || client.sync.lastSeq !== this.emitter.seq) {
          client.catchUp();
          quiet = false;
        } else if (client.sync.pendingEdits().length > 0) {
          client.run(false);
          quiet = false;
        }
      }
      if (quiet) return;
    }
  }
}

test('edits from two clients under richer agent writes: every edit accounted for, both converge', { timeout: 300000 }, async (t) => {
  const last = Number(process.env.ORIGINS_SEEDS ?? 4000);
  const started = performance.now();
  for (let seed = 1; seed <= last; seed++) {
    const world = await World.create(seed);
    try {
      for (let i = 0, steps = 10 + (seed % 31); i < steps; i++) world.step();
      world.heal();
      for (const client of world.clients) client.checkConverged();
    } catch (error) {
      error.message = `seed ${seed} (${world.rules.onConflict}): ${error.message}`;
      throw error;
    } finally {
      world.dispose();
    }
  }
  t.diagnostic(`${last} schedules in ${((performance.now() - started) / 1000).toFixed(1)} s`);
});
