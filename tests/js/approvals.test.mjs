// consumeApproval / effectKey (issue 17, section 2) on memoryStore() and a
// real redis-server, and exactly-once effects across a server killed with
// SIGKILL between consuming and acting, and between acting and answering,
// while the client re-sends its resume (child processes: approval-agent.mjs).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { captureLogger, createStateEmitter, createStateSync, server, storeKinds } from './store-support.mjs';
import { RedisServer } from './redis-support.mjs';
import { here } from './support.mjs';

const { consumeApproval, effectKey, redisStore } = server;

// A real approval: a client fed the emitter's snapshot, its guard's view and approve.
async function approvalOf(emitter, path) {
  const sync = await createStateSync();
  sync.feed(emitter.encode(await emitter.snapshot()));
  const view = sync.guard.view(path);
  assert.equal(view.ok, true, JSON.stringify(view));
  const result = sync.guard.approve(view.token);
  sync.dispose();
  assert.equal(result.ok, true, JSON.stringify(result));
  return result.approval;
}

for (const kind of storeKinds()) {
  describe(`consumeApproval on ${kind.name}`, () => {
    before(() => kind.setup());
    after(() => kind.teardown());

    test('once: the same approval replays the first decision, another one for the interrupt is refused', async () => {
      const store = kind.open();
      const emitter = await createStateEmitter({ store, key: 'a1', initialState: { proposal: { payee: 'ACME', amount: 120 } } });
      const approval = await approvalOf(emitter, '/proposal');
      const options = { store, threadId: 'a1', interruptId: 'int-1' };
      const first = await consumeApproval(approval, emitter.state, options);
      assert.deepEqual(first, { ok: true, decision: 'approved', replayed: false, effectKey: effectKey(approval, options) });
      await emitter.update({ proposal: null, paid: true }); // acting changed the state ...
      const again = await consumeApproval(approval, emitter.state, { ...options, store: kind.open() }); // ... another instance
      assert.deepEqual(again, { ...first, replayed: true }, 'the first decision, not a new verification');
      await emitter.update({ proposal: { payee: 'ACME', amount: 120 } });
      const other = await approvalOf(emitter, '/proposal'); // a later approval of the same value: another seq
      assert.notEqual(effectKey(other, options), first.effectKey);
      assert.deepEqual(await consumeApproval(other, emitter.state, options),
        { ok: false, decision: 'refused', replayed: false, effectKey: null, reason: 'already-consumed' });
      emitter.dispose();
    });

    test('not verified: refused, nothing recorded; then the right approval goes through', async () => {
      const store = kind.open();
      const emitter = await createStateEmitter({ store, key: 'a2', initialState: { proposal: { amount: 1 } } });
      const stale = await approvalOf(emitter, '/proposal');
      await emitter.update({ proposal: { amount: 999 } });
      const options = { store, threadId: 'a2', interruptId: 'int-2' };
      assert.deepEqual(await consumeApproval(stale, emitter.state, options),
        { ok: false, decision: 'refused', replayed: false, effectKey: null, reason: 'changed' });
      assert.equal((await consumeApproval({ path: 7 }, emitter.state, options)).reason, 'invalid-token');
      const fresh = await approvalOf(emitter, '/proposal');
      assert.equal((await consumeApproval(fresh, emitter.state, options)).ok, true);
      emitter.dispose();
    });

    test('concurrent consumers of one approval: exactly one is first', async () => {
      const emitter = await createStateEmitter({ store: kind.open(), key: 'a3', initialState: { proposal: { amount: 5 } } });
      const approval = await approvalOf(emitter, '/proposal');
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
        consumeApproval(approval, emitter.state, { store: i % 2 ? kind.open() : kind.open(), threadId: 'a3', interruptId: 'int-3' })));
      assert.ok(results.every((r) => r.ok && r.decision === 'approved'));
      assert.equal(results.filter((r) => !r.replayed).length, 1);
      emitter.dispose();
    });
  });
}

test('effectKey: stable across processes, different for any field', async () => {
  const approval = { path: '/proposal', seq: 12, viewedSeq: 11, digest: 'sha256:ab', epoch: 'E' };
  const context = { threadId: 't', interruptId: 'i' };
  const key = effectKey(approval, context);
  assert.match(key, /^[0-9a-f]{64}$/);
  const script = `const { effectKey } = await import(${JSON.stringify(join(here, '..', '..', 'js', 'src', 'server.js'))});
    const { initServerEngine } = await import(${JSON.stringify(join(here, '..', '..', 'js', 'src', 'server.js'))});
    await initServerEngine(); process.stdout.write(effectKey(${JSON.stringify(approval)}, ${JSON.stringify(context)}));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  await new Promise((resolve) => child.once('exit', resolve));
  assert.equal(out, key);
  for (const change of [{ seq: 13 }, { digest: 'sha256:ac' }, { epoch: 'F' }, { path: '/other' }]) {
    assert.notEqual(effectKey({ ...approval, ...change }, context), key, JSON.stringify(change));
  }
  assert.notEqual(effectKey(approval, { ...context, threadId: 'u' }), key);
  assert.notEqual(effectKey(approval, { ...context, interruptId: 'j' }), key);
  assert.equal(effectKey({ ...approval, viewedSeq: 3 }, context), key, 'viewedSeq is not part of what was approved');
});

describe('exactly once across SIGKILL (child processes, Redis)', () => {
  let redis;
  let store;
  const children = new Set();
  before(async () => {
    redis = await RedisServer.start();
    store = redisStore({ url: redis.url, prefix: 'pay:', logger: captureLogger() });
  });
  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    await store.close();
    await redis.close();
  });

  // Starts an agent process; resolves { port, child, saw(line) } once it listens.
  async function agent(pause = '') {
    const child = spawn(process.execPath, [join(here, 'approval-agent.mjs')], {
      env: { ...process.env, REDIS_URL: redis.url, PAUSE: pause }, stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.add(child);
    child.once('exit', () => children.delete(child));
    let out = '';
    const waiters = [];
    child.stdout.on('data', (d) => {
      out += d;
      for (const w of waiters) if (out.includes(w.line)) w.resolve();
    });
    const saw = (line) => new Promise((resolve) => (out.includes(line) ? resolve() : waiters.push({ line, resolve })));
    await saw('listening');
    return { port: Number(/listening (\d+)/.exec(out)[1]), child, saw };
  }

  const resumeBody = (approval, interruptId) => JSON.stringify({ threadId: 'pay-thread', interruptId, approval });
  const post = (port, body) => fetch(`http://127.0.0.1:${port}/resume`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  const total = async () => Number(await (await store.client()).sendCommand(['GET', 'payments:total']) ?? 0);

  // Kills the agent at `pause` during the client's resume; a new agent gets the re-sent resume.
  async function killedThenResent(pause, approval, interruptId) {
    const victim = await agent(pause);
    const cut = post(victim.port, resumeBody(approval, interruptId)).then(() => 'answered', () => 'cut');
    await victim.saw(pause === 'consume' ? 'consumed' : 'acted');
    const dead = new Promise((resolve) => victim.child.once('exit', resolve));
    victim.child.kill('SIGKILL');
    await dead;
    assert.equal(await cut, 'cut', 'the client saw its request cut');
    const next = await agent();
    const response = await post(next.port, resumeBody(approval, interruptId)); // the client re-sends
    assert.equal(response.status, 200);
    next.child.kill('SIGKILL');
    return response.json();
  }

  test('killed between consuming and acting, then between acting and answering: each payment once', async () => {
    const emitter = await createStateEmitter({ store, key: 'pay-thread', initialState: { proposal: { payee: 'ACME', amount: 120 } } });
    const first = await approvalOf(emitter, '/proposal');
    const r1 = await killedThenResent('consume', first, 'int-1');
    assert.equal(r1.replayed, true, 'the re-sent resume finds the consumed approval');
    assert.equal(await total(), 120, 'paid once');

    await emitter.refresh();
    await emitter.update({ proposal: { payee: 'Globex', amount: 30 } });
    const second = await approvalOf(emitter, '/proposal');
    const r2 = await killedThenResent('act', second, 'int-2');
    assert.equal(r2.replayed, true);
    assert.equal(await total(), 150, 'paid once more, not twice');

    // Re-sent again after everything: nothing more happens.
    const last = await agent();
    assert.equal((await (await post(last.port, resumeBody(second, 'int-2'))).json()).replayed, true);
    assert.equal(await total(), 150);
    last.child.kill('SIGKILL');
    emitter.dispose();
  });
});
