// Checkpoints in the browser (issue 16, section 1), unit tests:
// createStateSync({ persist: { key, storage } }) writes a checkpoint after every
// call that changed what it holds, off the hot path and coalesced; a reload
// restores state, position and pending edits (status 'resyncing', reason
// 'restored') and catches up by replay; damaged checkpoints are discarded with
// the reason; one holder per key. The seeded property test is persist-property.test.mjs.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { atStorage, ControlledStorage, corruptions, drain, KEY, readStored, sealed, until } from './persist-support.mjs';
import { jsDir, kInternals, pkg, plain, rng } from './support.mjs';

const { AguiSyncError, connectStateSync, createStateEmitter, createStateSync, memoryStorage } = pkg;
const { writeCatchUp } = await import(join(jsDir, 'src', 'server.js'));

const INITIAL = { items: [], form: { note: '' } };
const persist = (storage, extra = {}) => ({ persist: { key: KEY, storage, ...extra } });

async function agent() {
  return createStateEmitter({ epoch: 'E', snapshotRatio: 100, initialState: INITIAL });
}

// The agent adds `n` items; each update is one delta.
function grow(emitter, n) {
  const events = [];
  for (let i = 0; i < n; i++) events.push(...emitter.update({ ...emitter.state, items: [...emitter.state.items, emitter.seq + 1] }));
  return events;
}

const feedAll = (sync, emitter, events) => events.flatMap((event) => sync.feed(emitter.encode(event)));

// A page that got the snapshot and `n` deltas, then made one edit.
async function pageWithEdit(storage, emitter, n = 3, options = {}) {
  const sync = await createStateSync({ ...persist(storage), ...options });
  feedAll(sync, emitter, [emitter.snapshot(), ...grow(emitter, n)]);
  const edit = sync.edit([{ op: 'replace', path: '/form/note', value: 'mine' }]);
  assert.ok(edit.ok);
  return { sync, editId: edit.editId };
}

// A page that got the snapshot and two deltas, checkpointed them and went away; then the page that reopens it.
async function reopened(storage, emitter) {
  const first = await createStateSync(persist(storage));
  feedAll(first, emitter, [emitter.snapshot(), ...grow(emitter, 2)]);
  await first.flush();
  first.dispose();
  return createStateSync(persist(storage));
}

describe('persist: options', () => {
  test('a wrong persist option is a TypeError invalid-options', async () => {
    const storage = memoryStorage();
    const wrong = ['k', null, [], {}, { key: '' }, { key: 'k'.repeat(513) }, { key: 7 }, { key: 'k', storage: {} },
      { key: 'k', storage: { get() {}, set() {} } }, { key: 'k', storage, lock: 'yes' }, { key: 'k', storage, lockTimeoutMs: -1 },
      { key: 'k', storage, extra: 1 }];
    for (const p of wrong) {
      await assert.rejects(createStateSync({ persist: p }), (e) => e instanceof TypeError && e instanceof AguiSyncError && e.code === 'invalid-options',
        JSON.stringify(p));
    }
  });

  test('without persist: persistence is null and flush() resolves', async () => {
    const sync = await createStateSync();
    assert.equal(sync.persistence, null);
    await sync.flush();
    sync.dispose();
  });

  test('no default storage here (Node has no IndexedDB): persistence is off and says why', async () => {
    const sync = await createStateSync({ persist: { key: KEY } });
    assert.deepEqual({ ...sync.persistence, outcomes: [...sync.persistence.outcomes] }, {
      key: KEY, restore: 'skipped', active: false, inactiveReason: 'unsupported', error: null, outcomes: [],
      writes: 0, coalesced: 0, failures: 0, storageError: null, behind: false,
    });
    sync.feed('data: {"type":"STATE_SNAPSHOT","snapshot":{"a":1}}\n\n'); // works as without persist
    assert.deepEqual(sync.state, { a: 1 });
    sync.dispose();
  });
});

describe('persist: a reload', () => {
  test('restores the state, position and pending edits; resyncing (restored) until a replay; no snapshot', async () => {
    const storage = new ControlledStorage();
    const emitter = await agent();
    const { sync, editId } = await pageWithEdit(storage, emitter);
    await sync.flush();
    const before = { state: sync.state, confirmed: sync.confirmedState, lastSeq: sync.lastSeq, epoch: sync.epoch, lastEventId: sync.lastEventId, edits: sync.pendingEdits() };
    sync.dispose(); // the tab goes away
    await sync.flush();
    const missed = grow(emitter, 4); // the agent went on meanwhile

    const page = await createStateSync(persist(storage));
    const info = page.persistence;
    assert.equal(info.restore, 'restored');
    assert.equal(info.active, true);
    assert.deepEqual(info.outcomes.map((o) => [o.kind, o.reason, o.lastSeq]), [['resync', 'restored', before.lastSeq]]);
    assert.deepEqual(plain(page.state), plain(before.state), 'the visible state: the pending edit on top');
    assert.deepEqual(plain(page.confirmedState), plain(before.confirmed));
    assert.equal(page.state.form.note, 'mine');
    assert.equal(page.confirmedState.form.note, '');
    assert.deepEqual([page.lastSeq, page.epoch, page.lastEventId], [before.lastSeq, before.epoch, before.lastEventId]);
    assert.deepEqual(plain(page.pendingEdits()), plain(before.edits));
    assert.equal(page.pendingEdits()[0].editId, editId, 'the edit keeps its id');
    assert.equal(page.status, 'resyncing');
    assert.deepEqual(page.resyncRequest(), { reason: 'restored', lastSeq: before.lastSeq, lastEventId: page.resyncRequest().lastEventId, held: [] });
    assert.equal(page.guard.blocker(), 'resyncing');
    const { facade } = page[kInternals]();
    assert.deepEqual(JSON.parse(facade.visibleStateJson()), plain(page.state), 'the engine and the mirror agree');

    // The catch-up the server picks for this position is a replay of what was missed.
    const replay = emitter.replaySince(page.lastSeq, page.epoch);
    assert.deepEqual(replay.map((e) => e.metadata['agui-state-sync'].seq), missed.map((e) => e.metadata['agui-state-sync'].seq));
    feedAll(page, emitter, replay);
    assert.equal(page.status, 'synced');
    assert.deepEqual(plain(page.confirmedState), emitter.state);
    assert.equal(page.state.form.note, 'mine', 'still pending on top');
    assert.equal(page.metrics().snapshots, 0, 'no snapshot');
    await page.flush();
    assert.equal(readStored(storage.entries.get(KEY)).lastSeq, emitter.seq, 'the restored page writes on');
    page.dispose();
    emitter.dispose();
  });

  test('the stored form: a header with the digest of the body, members in a fixed order, the confirmed state', async () => {
    const storage = new ControlledStorage();
    const emitter = await agent();
    const { sync, editId } = await pageWithEdit(storage, emitter, 2, { clientId: 'tab' });
    await sync.flush();
    const text = storage.entries.get(KEY);
    const expected = {
      key: KEY, clientId: 'tab', editCounter: 1, lastSeq: 2, epoch: 'E', lastEventId: '2',
      edits: [{ editId, baseSeq: 2, ops: [{ op: 'replace', path: '/form/note', value: 'mine' }] }],
      state: sync.confirmedState, // its members in the mirror's order: the digest covers the bytes as stored
    };
    assert.equal(text, sealed(expected), 'byte for byte what an independent writer produces');
    assert.deepEqual(readStored(text), plain({ ...expected, state: { items: [1, 2], form: { note: '' } } }));
    sync.dispose();
    emitter.dispose();
  });

  test('the guard refuses until the catch-up has answered, then approves', async () => {
    const storage = new ControlledStorage();
    const emitter = await agent();
    const first = await createStateSync(persist(storage));
    feedAll(first, emitter, [emitter.snapshot(), ...grow(emitter, 2)]);
    assert.equal(first.guard.blocker(), null);
    await first.flush();
    first.dispose();
    await first.flush();

    const page = await createStateSync(persist(storage));
    const seen = [];
    page.guard.watch('/items', ({ approvable, reason }) => seen.push([approvable, reason]));
    assert.equal(page.guard.view('/items').ok, true, 'the value can be shown');
    assert.equal(page.guard.approve(page.guard.view('/items').token).reason, 'resyncing');
    page.feed(': connected\n\n'); // bytes of the new connection, before its catch-up: still refused
    assert.equal(page.guard.blocker(), 'resyncing');
    feedAll(page, emitter, grow(emitter, 1)); // the catch-up: the delta missed meanwhile
    assert.equal(page.guard.blocker(), null);
    assert.equal(page.guard.approve(page.guard.view('/items').token).ok, true);
    assert.deepEqual(seen[0], [false, 'resyncing']);
    assert.deepEqual(seen.at(-1), [true, null]);
    page.dispose();
    emitter.dispose();
  });

  test('nothing missed: a heartbeat at lastSeq ends the restored resync', async () => {
    const storage = new ControlledStorage();
    const emitter = await agent();
    const page = await reopened(storage, emitter);
    assert.equal(page.status, 'resyncing');
    page.feed(emitter.heartbeat());
    assert.equal(page.status, 'synced');
    assert.equal(page.resyncRequest(), null);
    page.dispose();
    emitter.dispose();
  });

  test('new edits take this page\'s clientId (restored ids kept); an explicit clientId continues its counter', async () => {
    const storage = new ControlledStorage();
    const emitter = await agent();
    const { sync, editId } = await pageWithEdit(storage, emitter);
    const prefix = (id) => id.slice(0, id.lastIndexOf(':'));
    await sync.flush();
    sync.dispose();
    const page = await createStateSync(persist(storage));
    const next = page.edit([{ op: 'add', path: '/form/x', value: 1 }]);
    assert.ok(next.ok);
    assert.notEqual(prefix(next.editId), prefix(editId), 'a fresh origin: never a number the last page may have sent');
    assert.equal(next.editId.endsWith(':1'), true);
    assert.deepEqual(page.pendingEdits().map((e) => e.editId), [editId, next.editId]);
    await page.flush();
    page.dispose();

    const storage2 = new ControlledStorage();
    const { sync: tab } = await pageWithEdit(storage2, emitter, 0, { clientId: 'tab' });
    await tab.flush();
    tab.dispose();
    const again = await createStateSync({ ...persist(storage2), clientId: 'tab' });
    assert.equal(again.edit([{ op: 'add', path: '/form/y', value: 1 }]).editId, 'tab:2');
    again.dispose();
    emitter.dispose();
  });

  test('a stored edit the ownership rules now refuse: edit-rejected among the restore outcomes, dropped from the checkpoint at once', async () => {
    const storage = new ControlledStorage();
    const emitter = await agent();
    const { sync, editId } = await pageWithEdit(storage, emitter);
    await sync.flush();
    sync.dispose();
    const page = await createStateSync({ ...persist(storage), ownership: { '/form': 'agent' } });
    assert.deepEqual(page.persistence.outcomes.map((o) => [o.kind, o.editId ?? o.reason, o.reason]),
      [['resync', 'restored', 'restored'], ['edit-rejected', editId, 'agent-owned']]);
    assert.deepEqual(page.pendingEdits(), []);
    assert.equal(page.state, page.confirmedState);
    await page.flush();
    assert.deepEqual(readStored(storage.entries.get(KEY)).edits, []);
    page.dispose();
    emitter.dispose();
  });
});

describe('persist: writing', () => {
  test('one write per call that changed the checkpoint, none for a call that did not', async () => {
    const storage = new ControlledStorage();
    const emitter = await agent();
    const sync = await createStateSync(persist(storage));
    const writes = async (call) => {
      const before = storage.sets;
      call();
      assert.equal(storage.sets, before, 'nothing is written inside the call');
      await sync.flush();
      return storage.sets - before;
    };
    assert.equal(await writes(() => sync.feed(emitter.encode(emitter.snapshot()))), 1, 'a snapshot');
    const [a, b] = grow(emitter, 2);
    assert.equal(await writes(() => sync.feed(emitter.encode(a) + emitter.encode(b))), 1, 'two deltas in one call: one write');
    assert.equal(await writes(() => sync.feed(emitter.encode(b))), 0, 'a duplicate');
    assert.equal(await writes(() => sync.feed(emitter.heartbeat())), 0, 'a heartbeat');
    assert.equal(await writes(() => sync.feed('data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}\n\n')), 0, 'a chat event');
    assert.equal(await writes(() => sync.feed('id: m7\ndata: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"!"}\n\n')), 1, 'lastEventId moved');
    assert.equal(await writes(() => sync.edit([{ op: 'replace', path: '/form/note', value: 'x' }])), 1, 'an edit');
    assert.equal(await writes(() => sync.edit([{ op: 'remove', path: '/nope' }])), 0, 'a refused edit');
    assert.equal(await writes(() => sync.end()), 0, 'an end without a gap');
    assert.equal(await writes(() => sync.reset()), 0, 'a reset');
    const [c, d] = grow(emitter, 2);
    assert.equal(await writes(() => sync.feed(emitter.encode(d))), 1, 'a held delta: lastEventId moved');
    assert.equal(await writes(() => sync.end()), 0, 'a gap turned resync: nothing a checkpoint holds moved');
    sync.reset();
    assert.equal(await writes(() => sync.feed(emitter.encode(c) + emitter.encode(d))), 1, 'the replay');
    assert.equal(readStored(storage.entries.get(KEY)).lastSeq, emitter.seq);
    assert.equal(sync.persistence.writes, storage.sets);
    sync.dispose();
    emitter.dispose();
  });

  test('slow storage: feed() never waits, one write at a time, the newest replaces the queued one', async () => {
    const storage = new ControlledStorage({ instant: false });
    const emitter = await agent();
    const sync = await createStateSync(persist(storage));
    sync.feed(emitter.encode(emitter.snapshot()));
    const events = grow(emitter, 200);
    const order = [];
    for (const [i, event] of events.entries()) {
      sync.feed(emitter.encode(event)); // storage never answered yet: still returns
      if (i % 20 === 0) {
        // The writer was just offered a checkpoint, so it runs: wait until its write is at storage (however long the digest takes).
        await atStorage([sync], storage, `the write taken at event ${i}`);
        order.push(readStored(storage.pending[0].value).lastSeq);
        storage.settle('commit');
      }
    }
    assert.equal(storage.maxPending, 1, 'never two writes in flight');
    await drain(sync, storage);
    assert.ok(storage.sets < 30, `writes coalesced: ${storage.sets} for 201 calls`);
    assert.ok(sync.persistence.coalesced > 150);
    assert.equal(readStored(storage.entries.get(KEY)).lastSeq, emitter.seq, 'the newest checkpoint is the one stored');
    assert.deepEqual(order, [...order].sort((x, y) => x - y), 'taken in order, written in order');
    sync.dispose();
    emitter.dispose();
  });

  test('a failed write is retried until it lands, unless a newer checkpoint came; failures are counted with the storage\'s error', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const advance = (ms) => t.mock.timers.tick(ms);
    const storage = new ControlledStorage({ instant: false });
    const emitter = await agent();
    const sync = await createStateSync(persist(storage));
    sync.feed(emitter.encode(emitter.snapshot()));
    const fates = ['fail', 'fail', 'commit'];
    await drain(sync, storage, () => fates.shift(), advance);
    assert.equal(sync.persistence.failures, 2);
    assert.equal(sync.persistence.storageError.message, 'storage write failed');
    assert.equal(sync.persistence.writes, 1);
    assert.equal(sync.persistence.behind, false);
    assert.equal(readStored(storage.entries.get(KEY)).lastSeq, 0);
    // A failed attempt ends flush(); the writer is behind and retries later.
    feedAll(sync, emitter, grow(emitter, 1));
    await until(() => storage.pending.length === 1, 'the write');
    storage.settle('fail');
    await sync.flush();
    assert.equal(sync.persistence.behind, true);
    assert.equal(storage.pending.length, 0, 'the retry waits');
    advance(49);
    // Sound without waiting: the retry's timer is on the mocked clock, so only advance() can fire it, and firing it
    // starts a write at once (offer()). atStorage() returns when the writer is idle (no retry started by 49 ms) or
    // when that write has reached storage, where nothing settles it: the count below tells which.
    await atStorage([sync], storage);
    assert.equal(storage.pending.length, 0, 'not before 50 ms');
    advance(1);
    await until(() => storage.pending.length === 1, 'the retry after 50 ms');
    storage.settle('fail');
    // A newer checkpoint replaces the one waiting for its retry.
    feedAll(sync, emitter, grow(emitter, 1));
    await until(() => storage.pending.length === 1, 'the newer write');
    assert.equal(readStored(storage.pending[0].value).lastSeq, 2);
    const more = ['fail', 'fail', 'fail', 'fail', 'commit'];
    await drain(sync, storage, () => more.shift(), advance);
    assert.equal(sync.persistence.failures, 2 + 2 + 4);
    assert.equal(readStored(storage.entries.get(KEY)).lastSeq, 2);
    assert.equal(sync.persistence.behind, false);
    sync.dispose();
    emitter.dispose();
  });

  test('dispose() stops writing; flush() then waits for the write in flight; the key passes to the next StateSync', async () => {
    const storage = new ControlledStorage({ instant: false });
    const emitter = await agent();
    const sync = await createStateSync(persist(storage));
    feedAll(sync, emitter, [emitter.snapshot(), ...grow(emitter, 1)]);
    await until(() => storage.pending.length === 1, 'a write in flight');
    feedAll(sync, emitter, grow(emitter, 1)); // queued behind it
    sync.dispose();
    assert.deepEqual([sync.persistence.active, sync.persistence.inactiveReason], [false, 'disposed']);
    let next = null;
    const creating = createStateSync(persist(storage, { lockTimeoutMs: 5000 })).then((s) => {
      next = s;
    });
    // A probe asks for the key after it and gives up at once: 'locked' proves the key was held when it asked. Had
    // dispose() released the key early, `creating` (which asked first) would hold it instead, and, with nothing
    // stored to digest, would have finished on microtasks alone, before the probe's 0 ms timer ran: `next` would be
    // set by now. So the order of these events, not a wait, decides.
    const probe = await createStateSync(persist(storage, { lockTimeoutMs: 0 }));
    assert.deepEqual([probe.persistence.active, probe.persistence.inactiveReason], [false, 'locked']);
    probe.dispose();
    assert.equal(next, null, 'the key is held until the write in flight ends');
    storage.settle('commit');
    await sync.flush();
    await creating;
    assert.equal(storage.sets, 1, 'the queued checkpoint was dropped');
    assert.equal(next.persistence.restore, 'restored');
    assert.equal(next.lastSeq, 1, 'what the committed write held');
    next.dispose();
    emitter.dispose();
  });
});

describe('persist: damaged storage', () => {
  for (const [name, corrupt] of Object.entries(corruptions)) {
    test(`${name}: the checkpoint is discarded, and the app is told why (invalid-checkpoint)`, async () => {
      const storage = new ControlledStorage();
      const emitter = await agent();
      const { sync } = await pageWithEdit(storage, emitter);
      await sync.flush();
      sync.dispose();
      const pick = ((r) => (n) => Math.floor(r() * n))(rng(name.length));
      storage.entries.set(KEY, corrupt(storage.entries.get(KEY), pick));

      const page = await createStateSync({ ...persist(storage), initialState: { fresh: true } });
      const info = page.persistence;
      assert.equal(info.restore, 'discarded');
      assert.ok(info.error instanceof AguiSyncError);
      assert.equal(info.error.code, 'invalid-checkpoint');
      assert.match(info.error.message, /discarded/);
      assert.deepEqual(info.outcomes, []);
      assert.equal(storage.entries.has(KEY), false, 'deleted from storage');
      assert.deepEqual(page.state, { fresh: true });
      assert.deepEqual([page.status, page.lastSeq, page.pendingEdits().length], ['unverified', null, 0]);
      assert.equal(info.active, true, 'writing goes on');
      feedAll(page, emitter, [emitter.snapshot()]);
      await page.flush();
      assert.equal(readStored(storage.entries.get(KEY)).lastSeq, emitter.seq);
      page.dispose();
      emitter.dispose();
    });
  }

  test('a sealed checkpoint the engine refuses is discarded with the engine\'s code', async () => {
    const base = { key: KEY, clientId: 't', editCounter: 0, lastSeq: 1, epoch: 'E', lastEventId: null, edits: [], state: {} };
    const cases = [
      [{ ...base, edits: 7 }, 'invalid-checkpoint'],
      [{ ...base, lastSeq: -1 }, 'invalid-checkpoint'],
      [{ ...base, state: { a: { b: { c: { d: { e: 1 } } } } } }, 'limit-exceeded'],
    ];
    for (const [body, code] of cases) {
      const storage = new ControlledStorage();
      storage.entries.set(KEY, sealed(body));
      const page = await createStateSync({ ...persist(storage), maxDepth: 3 });
      assert.equal(page.persistence.restore, 'discarded');
      assert.equal(page.persistence.error.code, code, JSON.stringify(body));
      assert.match(page.persistence.error.message, /the engine refused it/);
      assert.deepEqual(page.state, {});
      page.dispose();
    }
  });

  test('unreadable storage: restore \'unreadable\' with the storage\'s error; writing goes on', async () => {
    const storage = new ControlledStorage();
    storage.failGets = true;
    const page = await createStateSync(persist(storage));
    assert.equal(page.persistence.restore, 'unreadable');
    assert.equal(page.persistence.storageError.message, 'storage unreadable');
    assert.equal(page.persistence.active, true);
    page.feed('data: {"type":"STATE_SNAPSHOT","snapshot":{"a":1},"metadata":{"seq":3}}\n\n');
    await page.flush();
    assert.equal(readStored(storage.entries.get(KEY)).lastSeq, 3);
    page.dispose();
  });
});

describe('persist: two holders of one key', () => {
  test('the second runs without persistence and is told why (locked); it never writes', async () => {
    const storage = new ControlledStorage();
    const emitter = await agent();
    const { sync: first, editId } = await pageWithEdit(storage, emitter);
    await first.flush();
    const second = await createStateSync(persist(storage, { lockTimeoutMs: 20 }));
    assert.deepEqual([second.persistence.restore, second.persistence.active, second.persistence.inactiveReason], ['skipped', false, 'locked']);
    assert.deepEqual(second.pendingEdits(), [], 'it did not take the first one\'s edits (or editIds)');
    const sets = storage.sets;
    feedAll(second, emitter, [emitter.snapshot(), ...grow(emitter, 2)]);
    second.edit([{ op: 'replace', path: '/form/note', value: 'theirs' }]);
    await second.flush();
    assert.equal(storage.sets, sets, 'the second never wrote');
    assert.equal(readStored(storage.entries.get(KEY)).edits[0].editId, editId, 'the first one\'s checkpoint is intact');
    // The first goes away: a StateSync created now takes the key over.
    first.dispose();
    await first.flush();
    const third = await createStateSync(persist(storage));
    assert.equal(third.persistence.restore, 'restored');
    assert.deepEqual(third.pendingEdits().map((e) => e.editId), [editId]);
    for (const s of [second, third]) s.dispose();
    emitter.dispose();
  });

  test('another storage adapter is another key space: no lock between them', async () => {
    const a = await createStateSync(persist(new ControlledStorage()));
    const b = await createStateSync(persist(new ControlledStorage(), { lockTimeoutMs: 0 }));
    assert.deepEqual([a.persistence.active, b.persistence.active], [true, true]);
    a.dispose();
    b.dispose();
  });

  test('lock: false is last-writer-wins: every stored checkpoint is still whole', async () => {
    const storage = new ControlledStorage({ instant: false });
    const emitter = await agent();
    const tabs = [await createStateSync(persist(storage, { lock: false })), await createStateSync(persist(storage, { lock: false }))];
    for (const tab of tabs) tab.feed(emitter.encode(emitter.snapshot()));
    const random = rng(7);
    for (let i = 0; i < 40; i++) {
      const events = grow(emitter, 1);
      for (const tab of tabs) if (random() < 0.7) feedAll(tab, emitter, events);
      await atStorage(tabs, storage, `the tabs' writes of step ${i}`);
      while (storage.pending.length) {
        storage.settle('commit');
        assert.notEqual(readStored(storage.entries.get(KEY)), null, 'a whole checkpoint');
      }
    }
    for (const tab of tabs) await drain(tab, storage);
    assert.ok(storage.maxPending >= 2, 'both wrote at once');
    for (const tab of tabs) tab.dispose();
    emitter.dispose();
  });
});

describe('persist: reconnecting after a reload', () => {
  // One scripted response per request, on a real socket.
  async function server(handlers) {
    const requests = [];
    const http = createServer(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      requests.push({ headers: req.headers, body });
      res.setHeader('content-type', 'text/event-stream');
      handlers.shift()(req, res);
    });
    await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${http.address().port}/`, requests, close: () => { http.closeAllConnections(); http.close(); } };
  }
  const RUN_FINISHED = 'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n';

  test('connectStateSync sends the restored position with reason restored; the server replays; approvals wait for it', async () => {
    const storage = new ControlledStorage();
    const emitter = await agent();
    const { sync, editId } = await pageWithEdit(storage, emitter);
    await sync.flush();
    sync.dispose();
    grow(emitter, 3);
    const page = await createStateSync(persist(storage));
    let blockerAtOpen;
    const modes = [];
    const http = await server([(req, res) => {
      modes.push(writeCatchUp(res, emitter, req).mode);
      res.end(RUN_FINISHED);
    }]);
    const connection = connectStateSync(page, {
      url: http.url,
      body: () => ({ threadId: 't', runId: 'r', ...page.runInput() }),
      onStatus: (s) => { if (s.state === 'open') blockerAtOpen = page.guard.blocker(); },
    });
    await connection.done;
    http.close();
    const { headers, body } = http.requests[0];
    assert.equal(headers['x-agui-resync-reason'], 'restored');
    assert.equal(headers['x-agui-state-seq'], '3');
    assert.equal(headers['x-agui-state-epoch'], 'E');
    assert.equal(headers['last-event-id'], '3');
    assert.deepEqual(JSON.parse(body).forwardedProps.stateSync.edits.map((e) => e.editId), [editId], 'the restored edit travels');
    assert.deepEqual(modes, ['replay']);
    assert.equal(blockerAtOpen, 'resyncing', 'no approval before the catch-up answered');
    assert.equal(page.status, 'synced');
    assert.deepEqual(plain(page.confirmedState), emitter.state);
    assert.equal(page.metrics().snapshots, 0);
    page.dispose();
    emitter.dispose();
  });

  test('nothing missed: writeCatchUp answers current with a heartbeat, which ends the resync at once', async () => {
    const storage = new ControlledStorage();
    const emitter = await agent();
    const page = await reopened(storage, emitter);
    let statusBeforeEnd;
    const http = await server([(req, res) => {
      assert.equal(writeCatchUp(res, emitter, req).mode, 'current');
      res.write('', () => setTimeout(() => {
        statusBeforeEnd = page.status;
        res.end(RUN_FINISHED);
      }, 50));
    }]);
    await connectStateSync(page, { url: http.url }).done;
    http.close();
    assert.equal(statusBeforeEnd, 'synced');
    page.dispose();
    emitter.dispose();
  });

  test('StateSyncHttpAgent: stateSync.persist restores agent.state with the edit, and the next run catches up by replay', async () => {
    const { StateSyncHttpAgent } = await import(join(jsDir, 'src', 'ag-ui.js'));
    const storage = new ControlledStorage();
    const emitter = await agent();
    const { sync, editId } = await pageWithEdit(storage, emitter);
    await sync.flush();
    sync.dispose();
    grow(emitter, 2);
    const modes = [];
    const http = await server([(req, res) => {
      res.write('data: {"type":"RUN_STARTED","threadId":"t","runId":"r2"}\n\n');
      modes.push(writeCatchUp(res, emitter, req).mode);
      res.end('data: {"type":"RUN_FINISHED","threadId":"t","runId":"r2"}\n\n');
    }]);
    const ag = new StateSyncHttpAgent({ url: http.url, threadId: 't', stateSync: persist(storage) });
    await ag.ready;
    assert.equal(ag.stateSync.persistence.restore, 'restored');
    assert.equal(ag.state.form.note, 'mine');
    const copy = ag.clone();
    await copy.ready;
    assert.equal(copy.stateSync.persistence, null, 'a clone does not take the checkpoint');
    copy.dispose();
    await ag.runAgent({ runId: 'r2' });
    http.close();
    assert.equal(http.requests[0].headers['x-agui-resync-reason'], 'restored');
    assert.deepEqual(JSON.parse(http.requests[0].body).forwardedProps.stateSync.edits.map((e) => e.editId), [editId]);
    assert.deepEqual(modes, ['replay']);
    assert.equal(ag.stateSync.status, 'synced');
    assert.deepEqual(plain(ag.stateSync.confirmedState), emitter.state);
    ag.dispose();
    emitter.dispose();
  });
});
