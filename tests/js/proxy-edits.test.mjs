// User edits through agui-state-sync/proxy (docs/wire.md sections 8 and 9),
// on real sockets: a stateless AG-UI agent that knows nothing about us
// (form-agent.mjs, real @ag-ui/encoder) behind createStateSyncProxy, and
// clients built from createStateSync + connectStateSync. The edits travel in
// forwardedProps.stateSync.edits; the proxy judges them with the thread's
// emitter before the run goes upstream, sends the upstream the merged state,
// and the verdicts reach the clients in metadata.acks.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startFormUpstream, gate } from './form-agent.mjs';
import { connectClient, createStateSyncProxy, parseSse, readStream, runInput, runProxyCli, stackOn, startProxyCli, until } from './proxy-support.mjs';
import { plain } from './support.mjs';

const T = { timeout: 20000 };

// A brief that never changes keeps the state big enough for deltas to beat snapshots (replays stay replays).
const FORM = { brief: 'Plan the team offsite in May. '.repeat(40), form: { name: 'Ada', note: '' }, venue: 'Lisbon', proposal: { amount: 100 }, tags: [] };
// The first run of every thread: the agent fills the form it was given ({}).
const FILL = [{ ops: Object.entries(FORM).map(([key, value]) => ({ op: 'add', path: `/${key}`, value })) }];

const edit = (editId, baseSeq, ops) => ({ editId, baseSeq, ops });
const replace = (path, value) => ({ op: 'replace', path, value });

/** A FormAgent upstream (`plans[index]`: that run's steps) behind a proxy with `options`. */
async function edStack(plans, options = {}) {
  return stackOn(await startFormUpstream((input, index) => plans[index] ?? []), options);
}

/** The thread's first run (the agent fills the form): the client, synced. */
async function firstRun(s, threadId) {
  const client = await connectClient(s.url(), runInput(threadId, `${threadId}-r1`));
  await client.done;
  assert.equal(client.sync.status, 'synced');
  return client;
}

/** A run of `sync`'s client carrying `edits` (its `state` as given: what the client holds). */
async function editRun(s, sync, threadId, runId, edits, state = plain(sync.state)) {
  const client = await connectClient(s.url(), runInput(threadId, runId, { state, forwardedProps: { stateSync: { edits } } }), { sync });
  await client.done;
  return client;
}

/** The SSE events of a raw text, parsed. */
const eventsOf = (text) => parseSse(text).filter((e) => e.data !== undefined).map((e) => e.data);
/** Every metadata.acks entry in `events`, in order. */
const acksIn = (events) => events.flatMap((e) => e.metadata?.['agui-state-sync']?.acks ?? []);
/** The verdict of `editId` in `events` (the last one seen), without its seq (present only in some events). */
function verdict(events, editId) {
  const found = acksIn(events).filter((a) => a.editId === editId).at(-1);
  if (found === undefined) return undefined;
  const { seq, ...rest } = found;
  return rest;
}

describe('proxy: edits reach a backend that knows nothing about them', () => {
  test('the upstream gets the merged state, without stateSync; the acks reach the client in seq order', T, async () => {
    const s = await edStack([FILL, [{ ops: [replace('/venue', 'Porto')] }]], { edits: { ownership: { '/proposal': 'agent' } } });
    try {
      const first = await firstRun(s, 't1');
      const base = first.sync.lastSeq;
      const confirmed = plain(first.sync.state);
      // The client's `state` is its confirmed state: only the proxy can have merged the edits into what the agent gets.
      const second = await editRun(s, first.sync, 't1', 't1-r2', [
        edit('c1:1', base, [replace('/form/note', 'window seat')]),
        edit('c1:2', base, [replace('/proposal/amount', 1)]),
      ], confirmed);
      const forwarded = s.upstream.requests[1].input;
      assert.deepEqual(forwarded.state, { ...FORM, form: { name: 'Ada', note: 'window seat' } });
      assert.equal(forwarded.forwardedProps.stateSync, undefined, 'stateSync is the proxy\'s: never forwarded');

      const events = eventsOf(second.text());
      assert.equal(events[0].type, 'RUN_STARTED');
      const ackEvent = events.find((e) => e.metadata?.['agui-state-sync']?.acks);
      assert.equal(ackEvent.metadata['agui-state-sync'].seq, base + 1, 'the verdicts come first after RUN_STARTED, right after the client\'s position');
      assert.deepEqual(
        ackEvent.metadata['agui-state-sync'].acks.map(({ editId, status, reason }) => ({ editId, status, reason })),
        [{ editId: 'c1:1', status: 'applied', reason: undefined }, { editId: 'c1:2', status: 'rejected', reason: 'agent-owned' }],
      );
      const seqs = events.filter((e) => e.metadata?.['agui-state-sync']?.seq !== undefined).map((e) => e.metadata['agui-state-sync'].seq);
      assert.deepEqual(seqs, seqs.map((_, i) => base + 1 + i), 'state events in seq order, one step each');
      assert.equal(second.sync.status, 'synced');
      assert.deepEqual(plain(second.sync.state), { ...FORM, form: { name: 'Ada', note: 'window seat' }, venue: 'Porto' });
      assert.deepEqual(s.proxy.stats().edits, { applied: 1, rejected: 1 });
      assert.deepEqual(s.errors, []);
    } finally {
      await s.close();
    }
  });

  test('a re-sent edit applies once: its first verdict (with that seq) comes again', T, async () => {
    const s = await edStack([FILL]);
    try {
      const first = await firstRun(s, 't2');
      const base = first.sync.lastSeq;
      const position = { 'x-agui-state-seq': String(base), 'x-agui-state-epoch': first.sync.epoch };
      const add = edit('c1:1', base, [{ op: 'add', path: '/tags/-', value: 'vegetarian' }]);
      // The run carrying the edit; its stream never reaches the client's engine (say the connection broke).
      const lost = await readStream(s.url(), { input: runInput('t2', 't2-r2', { forwardedProps: { stateSync: { edits: [add] } } }), headers: position });
      assert.equal(verdict(lost.events.map((e) => e.data), 'c1:1').status, 'applied');
      // So the client sends it again, with a new one.
      const third = await editRun(s, first.sync, 't2', 't2-r3', [add, edit('c1:2', base, [{ op: 'add', path: '/tags/-', value: 'aisle' }])]);
      assert.deepEqual(s.upstream.requests[2].input.state.tags, ['vegetarian', 'aisle']);
      const acks = acksIn(eventsOf(third.text())).filter((a) => a.editId === 'c1:1');
      assert.ok(acks.length > 0 && acks.every((a) => a.status === 'applied' && (a.seq ?? base + 1) === base + 1), 'the first verdict, at its seq');
      assert.equal(third.sync.status, 'synced');
      assert.deepEqual(plain(third.sync.state).tags, ['vegetarian', 'aisle']);
      assert.deepEqual(s.proxy.stats().edits, { applied: 3, rejected: 0 }, 'a repeated verdict counts again, its effect does not');
    } finally {
      await s.close();
    }
  });

  test('agent-wins: an edit of a shared path the upstream wrote since its baseSeq is a conflict; other paths apply', T, async () => {
    const plans = [FILL, [{ ops: [replace('/venue', 'Porto')] }]];
    const s = await edStack(plans);
    try {
      const editor = await firstRun(s, 't3');
      const base = editor.sync.lastSeq;
      // Meanwhile another client's run has the agent change the venue.
      await (await connectClient(s.url(), runInput('t3', 't3-other', { state: plain(editor.sync.state) }))).done;
      const late = await editRun(s, editor.sync, 't3', 't3-r3', [
        edit('c1:1', base, [replace('/venue', 'Faro')]),
        edit('c1:2', base, [replace('/form/note', 'late but fine')]),
      ]);
      const events = eventsOf(late.text());
      assert.deepEqual(verdict(events, 'c1:1'), { editId: 'c1:1', status: 'rejected', reason: 'conflict' });
      assert.equal(verdict(events, 'c1:2').status, 'applied');
      assert.equal(s.upstream.requests[2].input.state.venue, 'Porto', 'the agent\'s write stands');
      assert.equal(s.upstream.requests[2].input.state.form.note, 'late but fine');
    } finally {
      await s.close();
    }
  });

  test('user-wins: the same late edit applies; ownership still refuses agent-owned paths', T, async () => {
    const plans = [FILL, [{ ops: [replace('/venue', 'Porto')] }]];
    const s = await edStack(plans, { edits: { ownership: { '/proposal': 'agent' }, onConflict: 'user-wins' } });
    try {
      const editor = await firstRun(s, 't4');
      const base = editor.sync.lastSeq;
      await (await connectClient(s.url(), runInput('t4', 't4-other', { state: plain(editor.sync.state) }))).done;
      const late = await editRun(s, editor.sync, 't4', 't4-r3', [
        edit('c1:1', base, [replace('/venue', 'Faro')]),
        edit('c1:2', base, [replace('/proposal', { amount: 0 })]),
      ]);
      const events = eventsOf(late.text());
      assert.equal(verdict(events, 'c1:1').status, 'applied');
      assert.deepEqual(verdict(events, 'c1:2'), { editId: 'c1:2', status: 'rejected', reason: 'agent-owned' });
      assert.equal(s.upstream.requests[2].input.state.venue, 'Faro');
      assert.deepEqual(s.upstream.requests[2].input.state.proposal, { amount: 100 });
    } finally {
      await s.close();
    }
  });

  test('edits made in another epoch are judged as made at the thread\'s start', T, async () => {
    const s = await edStack([FILL]);
    try {
      const first = await firstRun(s, 't5');
      const input = runInput('t5', 't5-r2', {
        forwardedProps: { stateSync: { lastSeq: first.sync.lastSeq, epoch: 'an-earlier-proxy', edits: [edit('c1:1', first.sync.lastSeq, [replace('/venue', 'Faro')])] } },
      });
      const result = await readStream(s.url(), { input });
      // The proxy's first upstream state wrote /venue after its start: unknown to that client, so a conflict.
      assert.deepEqual(verdict(result.events.map((e) => e.data), 'c1:1'), { editId: 'c1:1', status: 'rejected', reason: 'conflict' });
    } finally {
      await s.close();
    }
  });

  test('a thread the proxy has no state of: the edits are not judged, the client\'s state goes upstream as sent', T, async () => {
    const s = await edStack([[]]);
    try {
      const state = { ...FORM, form: { name: 'Ada', note: 'typed before the first run' } };
      const input = runInput('t6', 't6-r1', { state, forwardedProps: { stateSync: { edits: [edit('c1:1', null, [replace('/form/note', 'typed before the first run')])] } } });
      const result = await readStream(s.url(), { input });
      assert.equal(result.status, 200);
      assert.deepEqual(s.upstream.requests[0].input.state, state);
      assert.equal(s.upstream.requests[0].input.forwardedProps.stateSync, undefined);
      assert.deepEqual(acksIn(result.events.map((e) => e.data)), []);
      assert.deepEqual(s.proxy.stats().edits, { applied: 0, rejected: 0 });
    } finally {
      await s.close();
    }
  });
});

describe('proxy: acks reach every client of the thread and survive reconnects', () => {
  test('another live run of the thread gets the acks in its stream at once, and stays in step', T, async () => {
    const hold = gate();
    const s = await edStack([FILL, [{ ops: [replace('/venue', 'Porto')] }, { ops: [replace('/form/name', 'Grace')], gate: hold.promise }]]);
    try {
      const editor = await firstRun(s, 't7');
      const watcher = await connectClient(s.url(), runInput('t7', 't7-watch', { state: plain(editor.sync.state) }), { sync: editor.sync });
      await until(() => plain(watcher.sync.state).venue === 'Porto', 'the watcher\'s run under way');
      const base = editor.sync.lastSeq;
      const request = await readStream(s.url(), {
        input: runInput('t7', 't7-edit', { forwardedProps: { stateSync: { lastSeq: null, edits: [edit('c2:1', base, [replace('/form/note', 'from another tab')])] } } }),
        stop: (events) => events.some((e) => e.data.type === 'RUN_FINISHED'),
      });
      await until(() => verdict(eventsOf(watcher.text()), 'c2:1') !== undefined, 'the ack in the watcher\'s stream');
      assert.equal(watcher.sync.status, 'synced');
      assert.equal(plain(watcher.sync.state).form.note, 'from another tab');
      // The watcher's agent started before the edit; its later writes are the agent's (docs/wire.md section 9).
      hold.open();
      await watcher.done;
      assert.equal(watcher.sync.status, 'synced');
      assert.equal(plain(watcher.sync.state).form.name, 'Grace');
      // That agent never saw the edit: its write is rebased on the thread's state, so the acked edit stands.
      assert.equal(plain(watcher.sync.state).form.note, 'from another tab', 'the acked edit survives the older run\'s later write');
      const later = await connectClient(s.url(), runInput('t7', 't7-later', { state: plain(watcher.sync.state) }));
      await later.done;
      assert.deepEqual(plain(later.sync.state).form, { name: 'Grace', note: 'from another tab' }, 'and the thread holds both');
      assert.equal(verdict(request.events.map((e) => e.data), 'c2:1').status, 'applied', 'the requester has it too (in its snapshot)');
    } finally {
      hold.open();
      await s.close();
    }
  });

  test('a snapshot-only upstream that started before an edit: its later snapshot changes only what it changed', T, async () => {
    const hold = gate();
    const late = [{ ops: [replace('/venue', 'Porto')], snapshot: true }, { ops: [replace('/form/name', 'Grace'), replace('/tags', ['x'])], gate: hold.promise, snapshot: true }];
    const s = await edStack([FILL, late]);
    try {
      const editor = await firstRun(s, 't9');
      const watcher = await connectClient(s.url(), runInput('t9', 't9-watch', { state: plain(editor.sync.state) }), { sync: editor.sync });
      await until(() => plain(watcher.sync.state).venue === 'Porto', 'the watcher\'s run under way');
      const request = await readStream(s.url(), {
        input: runInput('t9', 't9-edit', { forwardedProps: { stateSync: { lastSeq: null, edits: [edit('c2:1', editor.sync.lastSeq, [replace('/form/note', 'mine')])] } } }),
        stop: (events) => events.some((e) => e.data.type === 'RUN_FINISHED'),
      });
      assert.equal(verdict(request.events.map((e) => e.data), 'c2:1').status, 'applied');
      hold.open();
      await watcher.done;
      assert.equal(watcher.sync.status, 'synced');
      // Its snapshot says note: '' (it never saw the edit); it did not write the note, so the edit stands.
      assert.deepEqual(plain(watcher.sync.state).form, { name: 'Grace', note: 'mine' });
      assert.deepEqual(plain(watcher.sync.state).tags, ['x']);
      assert.equal(plain(watcher.sync.state).venue, 'Porto');
      const seen = eventsOf(watcher.text());
      const ackAt = seen.findIndex((e) => (e.metadata?.['agui-state-sync']?.acks ?? []).some((a) => a.editId === 'c2:1'));
      assert.ok(ackAt > 0, 'the watcher got the ack');
      const later = seen.slice(ackAt + 1).filter((e) => e.type === 'STATE_DELTA' || e.type === 'STATE_SNAPSHOT');
      assert.ok(later.length > 0 && later.every((e) => e.type === 'STATE_DELTA' && e.delta.every((op) => op.path !== '/form/note')), 'after the ack, no write of the note went out');
    } finally {
      hold.open();
      await s.close();
    }
  });

  test('a client that missed the ack gets it by replay, by snapshot, and on a Last-Event-ID resume', T, async () => {
    const hold = gate();
    const s = await edStack([FILL, [{ ops: [replace('/venue', 'Porto')], gate: hold.promise }], [], []]);
    try {
      const first = await firstRun(s, 't8');
      const base = first.sync.lastSeq;
      const epoch = first.sync.epoch;
      const position = { 'x-agui-state-seq': String(base), 'x-agui-state-epoch': epoch };
      const input = runInput('t8', 't8-r2', { forwardedProps: { stateSync: { edits: [edit('c1:1', base, [replace('/form/note', 'n')])] } } });
      // The edits run is cut right after RUN_STARTED: the client never read its ack.
      const cut = await readStream(s.url(), { input, headers: position, stop: (events) => events.length >= 1 });
      const [key] = cut.events[0].id.split(':');
      const resumed = await readStream(s.url(), { method: 'GET', headers: { ...position, 'last-event-id': `${key}:1` }, stop: (events) => verdict(events.map((e) => e.data), 'c1:1') !== undefined });
      assert.ok(['exact', 'caught-up'].includes(resumed.headers.get('x-agui-resume')));
      assert.equal(verdict(resumed.events.map((e) => e.data), 'c1:1').status, 'applied');
      hold.open();
      await until(() => s.upstream.requests.length === 2 && s.proxy.stats().liveRuns === 0, 'the edits run to finish');

      // A later run from the position before the edits: the missed deltas, acks included.
      const replay = await readStream(s.url(), { input: runInput('t8', 't8-r3'), headers: position });
      const replayed = replay.events.map((e) => e.data);
      assert.equal(replayed[1].type, 'STATE_DELTA', 'answered by replay');
      assert.equal(replayed[1].metadata['agui-state-sync'].baseSeq, base);
      assert.equal(verdict(replayed, 'c1:1').status, 'applied');
      // A client whose state is wrong gets a snapshot: it repeats the verdict with its seq.
      const snap = await readStream(s.url(), { input: runInput('t8', 't8-r4'), headers: { ...position, 'x-agui-resync-reason': 'digest-mismatch' } }); // (the header a client sends: X-AGUI-Resync-Reason)
      const snapshot = snap.events.map((e) => e.data).find((e) => e.type === 'STATE_SNAPSHOT');
      assert.deepEqual(snapshot.metadata['agui-state-sync'].acks.find((a) => a.editId === 'c1:1'), { editId: 'c1:1', status: 'applied', seq: base + 1 });
    } finally {
      hold.open();
      await s.close();
    }
  });
});

describe('proxy: edits from the client API end as outcomes', () => {
  test('StateSyncHttpAgent.edit(): the upstream sees the edit, the app hears edit-acked, nothing stays pending', T, async () => {
    const { StateSyncHttpAgent } = await import('../../js/src/ag-ui.js');
    const s = await edStack([FILL, [{ ops: [replace('/venue', 'Porto')] }]], { edits: { ownership: { '/proposal': 'agent' } } });
    const outcomes = [];
    const agent = new StateSyncHttpAgent({ url: s.url(), threadId: 'ta', stateSync: { onOutcome: (o) => void outcomes.push(o) } });
    try {
      await agent.ready;
      await agent.runAgent({ runId: 'ta-1' });
      const kept = agent.edit([replace('/form/note', 'window seat')]);
      const refused = agent.edit([replace('/proposal/amount', 1)]); // this client was not given the policy: the proxy refuses it
      assert.equal(kept.ok, true);
      assert.equal(refused.ok, true);
      await agent.runAgent({ runId: 'ta-2' });
      assert.equal(s.upstream.requests[1].input.state.form.note, 'window seat');
      const edits = outcomes.filter((o) => o.kind.startsWith('edit-') || o.kind === 'conflict');
      assert.deepEqual(edits.find((o) => o.editId === kept.editId), { kind: 'edit-acked', editId: kept.editId, seq: edits.find((o) => o.editId === kept.editId).seq });
      assert.deepEqual(edits.find((o) => o.editId === refused.editId), { kind: 'edit-rejected', editId: refused.editId, reason: 'agent-owned' });
      assert.deepEqual(agent.stateSync.pendingEdits(), []);
      assert.equal(agent.stateSync.status, 'synced');
      assert.deepEqual(plain(agent.state), { ...FORM, form: { name: 'Ada', note: 'window seat' }, venue: 'Porto' });
      assert.deepEqual(plain(agent.stateSync.confirmedState), plain(agent.state));
    } finally {
      agent.dispose();
      await s.close();
    }
  });

  test('sync.edit() + runInput() under agent-wins: an edit the agent overwrote ends as a reported conflict', T, async () => {
    const s = await edStack([FILL, [{ ops: [replace('/venue', 'Porto')] }], []]);
    try {
      const first = await firstRun(s, 'tb');
      const outcomes = [];
      const { sync } = first;
      const mine = sync.edit([replace('/venue', 'Faro')]);
      assert.equal(mine.ok, true);
      // Another client's run has the agent write the venue before this client's edit arrives.
      await (await connectClient(s.url(), runInput('tb', 'tb-other', { state: plain(sync.confirmedState) }))).done;
      const next = await connectClient(s.url(), { ...runInput('tb', 'tb-3'), ...sync.runInput() }, { sync, connect: { onOutcome: (o) => void outcomes.push(o) } });
      await next.done;
      // The catch-up brings the agent's write first: the client reports the conflict (the agent's ack then rejects it too).
      const fate = outcomes.filter((o) => o.editId === mine.editId);
      assert.deepEqual(fate.map((o) => o.kind), ['conflict']);
      assert.deepEqual([fate[0].path, fate[0].mine, fate[0].theirs, fate[0].resolution], ['/venue', 'Faro', 'Porto', 'agent-wins']);
      assert.deepEqual(sync.pendingEdits(), []);
      assert.equal(plain(sync.state).venue, 'Porto', 'the agent\'s value');
      assert.equal(s.upstream.requests[2].input.state.venue, 'Porto');
    } finally {
      await s.close();
    }
  });
});

describe('proxy: hostile edits are a 400 and apply nothing', () => {
  let deep = 1;
  for (let i = 0; i < 300; i++) deep = [deep];
  const valid = edit('c1:1', 0, [replace('/form/note', 'must not apply')]);
  const cases = [
    ['not an array', { editId: 'c1:1' }],
    ['a string', '[]'],
    ['too many', Array.from({ length: 1025 }, (_, i) => edit(`c1:${i}`, 0, [replace('/venue', 'x')]))],
    ['an entry that is not an object', [valid, 1]],
    ['no editId', [valid, { baseSeq: 0, ops: [] }]],
    ['an editId over 256 bytes', [valid, edit(`${'é'.repeat(128)}:1`, 0, [])]],
    ['a negative baseSeq', [valid, edit('c1:2', -1, [])]],
    ['a fractional baseSeq', [valid, edit('c1:2', 1.5, [])]],
    ['ops not an array', [valid, edit('c1:2', 0, 'replace /venue')]],
    ['ops nested too deep', [valid, edit('c1:2', 0, [{ op: 'add', path: '/deep', value: deep }])]],
  ];
  test('each malformed list is refused with code invalid-request, before anything is set up', T, async () => {
    const s = await edStack([FILL, []]);
    try {
      const first = await firstRun(s, 'th');
      const seq = first.sync.lastSeq;
      for (const [what, edits] of cases) {
        const response = await fetch(s.url(), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(runInput('th', `th-${what}`, { forwardedProps: { stateSync: { edits } } })),
        });
        assert.equal(response.status, 400, what);
        const body = await response.json();
        assert.equal(body.error.code, 'invalid-request', what);
        assert.match(body.error.message, /stateSync\.edits/, what);
      }
      assert.equal(s.upstream.requests.length, 1, 'no run went upstream');
      assert.deepEqual(s.proxy.stats().edits, { applied: 0, rejected: 0 });
      // The thread is where it was: a client at its seq with its state gets no state event at all.
      const next = await readStream(s.url(), {
        input: runInput('th', 'th-after', { state: plain(first.sync.state) }),
        headers: { 'x-agui-state-seq': String(seq), 'x-agui-state-epoch': first.sync.epoch },
      });
      assert.deepEqual(next.events.map((e) => e.data.type), ['RUN_STARTED', 'RUN_FINISHED'], 'nothing to catch up, nothing changed');
      assert.equal(s.upstream.requests[1].input.state.form.note, '');
      assert.deepEqual(s.errors, []);
    } finally {
      await s.close();
    }
  });

  test('a bad edits policy is refused when the proxy is created', () => {
    for (const edits of [5, { ownership: { venue: 'agent' } }, { ownership: { '/venue': 'me' } }, { onConflict: 'newest' }, { owner: {} }]) {
      assert.throws(() => createStateSyncProxy({ upstream: 'http://127.0.0.1:1/agent', edits }), { code: 'invalid-options' });
    }
  });
});

describe('agui-state-sync-proxy (CLI): the edits policy', () => {
  test('--own and --on-conflict set it; a bad value exits 2', T, async () => {
    for (const args of [['--own', '/proposal'], ['--own', 'proposal=agent'], ['--own', '/proposal=boss'], ['--on-conflict', 'newest']]) {
      const r = runProxyCli(['--upstream', 'http://127.0.0.1:1/agent', ...args]);
      assert.equal(r.status, 2, args.join(' '));
      assert.match(r.stderr, /usage:/);
    }
    const upstream = await startFormUpstream((input, index) => [FILL, [{ ops: [replace('/venue', 'Porto')] }], []][index] ?? []);
    const args = ['--upstream', upstream.url, '--port', '0', '--own', '/proposal=agent', '--own', '/form=user', '--on-conflict', 'agent-wins'];
    const cli = await startProxyCli(args);
    try {
      const { url } = cli;
      const first = await connectClient(url, runInput('tc', 'tc-1'));
      await first.done;
      const base = first.sync.lastSeq;
      await (await connectClient(url, runInput('tc', 'tc-2', { state: plain(first.sync.state) }))).done; // the agent writes the venue
      const result = await readStream(url, {
        input: runInput('tc', 'tc-3', { forwardedProps: { stateSync: { edits: [
          edit('c1:1', base, [replace('/proposal/amount', 1)]),
          edit('c1:2', base, [replace('/venue', 'Faro')]),
          edit('c1:3', base, [replace('/form/name', 'Grace')]),
        ] } } }),
      });
      const events = result.events.map((e) => e.data);
      assert.deepEqual(['c1:1', 'c1:2', 'c1:3'].map((id) => verdict(events, id).reason ?? 'applied'), ['agent-owned', 'conflict', 'applied']);
    } finally {
      await cli.stop();
      await upstream.close();
    }
  });
});
