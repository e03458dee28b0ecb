// The trust boundary (issue 38, SECURITY.md): behind the proxy is a backend
// that answers 401 unless `Authorization: Bearer alice`. Mallory knows
// alice's threadId, runId and stream key, and sends every request of the
// issue's table, with another token or none: she gets a refusal that names
// nothing of the thread, and nothing of the thread changes. The control of
// each row: alice, with the same credentials on another connection, attaches,
// resumes after a cut, edits and approves once. The same suite runs with the
// proxy's store in memory and on a real redis-server.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readStream, runInput, serve, stackOn, startProxyCli, until } from './proxy-support.mjs';
import { jsDir, pkg } from './support.mjs';
import { RedisServer } from './redis-support.mjs';

const { memoryStore, redisStore } = await import(join(jsDir, 'src', 'server.js'));

const ALICE = { authorization: 'Bearer alice' };
const MALLORY = { authorization: 'Bearer mallory' };
const PAYEE = 'alice-payee';
const SECRET = 'alice-secret-text';

/**
 * The backend: 401 unless Bearer alice. A run sends its state (payee from the
 * input's state when it has one), a message with alice's text, and waits for
 * release(runId) when forwardedProps.hold is set. Counts every request it saw
 * and the runs that carried a resume (the effect an approval authorizes).
 */
async function authUpstream() {
  const seen = [];
  const effects = [];
  const holds = new Map();
  const answer = { refuseAll: false }; // alice's credentials revoked
  const server = await serve((req, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', async () => {
      const input = JSON.parse(body);
      seen.push({ auth: req.headers.authorization ?? null, input });
      if (req.headers.authorization !== ALICE.authorization || answer.refuseAll) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
        res.end(JSON.stringify({ error: 'unauthorized' }));
        return;
      }
      if (Array.isArray(input.resume) && input.resume.length > 0) effects.push(input.runId);
      const ids = { threadId: input.threadId, runId: input.runId };
      const payee = input.state?.payee ?? PAYEE;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (event) => res.write(`data: ${JSON.stringify(event)}\n\n`);
      send({ type: 'RUN_STARTED', ...ids });
      send({ type: 'STATE_SNAPSHOT', snapshot: { payee, amount: 120, note: SECRET } });
      send({ type: 'TEXT_MESSAGE_START', messageId: `m-${input.runId}`, role: 'assistant' });
      send({ type: 'TEXT_MESSAGE_CONTENT', messageId: `m-${input.runId}`, delta: SECRET });
      send({ type: 'TEXT_MESSAGE_END', messageId: `m-${input.runId}` });
      if (input.forwardedProps?.hold) await new Promise((resolve) => holds.set(input.runId, resolve));
      send({ type: 'RUN_FINISHED', ...ids });
      res.end();
    });
  });
  return {
    url: server.url('/agent'),
    seen,
    effects,
    answer,
    release: (runId) => holds.get(runId)?.(),
    held: (runId) => holds.has(runId),
    close: () => server.close(),
  };
}

const approvalOf = (value) => ({ path: '/payee', seq: 1, digest: pkg.stateDigest(value), epoch: null });
const entry = (approval, interruptId = 'pay') => ({ interruptId, status: 'resolved', payload: { approved: true, approval } });
const editsOf = (payee, baseSeq = null) => ({ stateSync: { edits: [{ editId: `c1:${payee}`, baseSeq, ops: [{ op: 'replace', path: '/payee', value: payee }] }] } });
// The seq of the last state event of a stream: where an edit made on it stands.
const lastSeq = (result) => result.events.map((e) => e.data.metadata?.['agui-state-sync']?.seq).filter(Number.isInteger).at(-1) ?? null;

const attach = (url, threadId, headers = {}) => readStream(url, { method: 'GET', headers: { 'x-agui-attach': threadId, ...headers } });
const post = (url, input, headers = {}, stop) => readStream(url, { input, headers, stop });

// Nothing of alice's thread: not her state, her text, her stream key or her runId.
function assertNothingOf(result, { key, runId } = {}) {
  assert.equal(result.status, 403);
  assert.ok(!result.text.includes(PAYEE) && !result.text.includes(SECRET), 'no state or text of the thread');
  if (key) assert.ok(!result.text.includes(key), 'no stream key');
  if (runId) assert.ok(!result.text.includes(runId), 'no runId');
  assert.equal(result.headers.get('x-agui-resume'), null);
}

for (const kind of ['memory', 'redis']) {
  describe(`trust boundary, proxy store in ${kind}`, () => {
    let upstream;
    let proxy;
    let redis = null;
    let store;
    before(async () => {
      await pkg.initEngine();
      upstream = await authUpstream();
      if (kind === 'redis') {
        redis = await RedisServer.start();
        store = redisStore({ url: redis.url, prefix: `trust-${process.pid}:` });
      } else store = memoryStore();
      proxy = await stackOn(upstream, { store });
    });
    after(async () => {
      await proxy.close();
      await store.close?.();
      await redis?.stop();
    });

    // Alice's run, held open: { key, runId } of her stream.
    async function aliceRun(threadId, runId, extra = {}) {
      const held = post(proxy.url(), runInput(threadId, runId, { forwardedProps: { hold: true }, ...extra }), ALICE,
        (events) => events.some((e) => e.data.type === 'TEXT_MESSAGE_END'));
      const result = await held;
      assert.equal(result.status, 200);
      return { key: result.events[0].id.split(':')[0], runId, result };
    }

    test('attach: mallory gets 403 during alice\'s run and on the idle thread; alice attaches on another connection', async () => {
      const { key, runId } = await aliceRun('t-attach', 'r-attach');
      for (const headers of [MALLORY, {}]) assertNothingOf(await attach(proxy.url(), 't-attach', headers), { key, runId });
      const mine = attach(proxy.url(), 't-attach', ALICE);
      await until(() => upstream.held(runId));
      upstream.release(runId);
      const joined = await mine;
      assert.equal(joined.status, 200);
      assert.ok(joined.text.includes(PAYEE), 'alice sees her thread');
      for (const headers of [MALLORY, {}]) assertNothingOf(await attach(proxy.url(), 't-attach', headers), { key, runId });
      assert.equal((await attach(proxy.url(), 't-attach', ALICE)).status, 200, 'the idle thread, for alice');
    });

    test('resume: a POST of alice\'s threadId+runId and her Last-Event-ID are refused; the upstream never sees them; alice resumes', async () => {
      const { key, runId } = await aliceRun('t-resume', 'r-resume');
      const before = upstream.seen.length;
      assertNothingOf(await post(proxy.url(), runInput('t-resume', runId), MALLORY), { key });
      assertNothingOf(await readStream(proxy.url(), { method: 'GET', headers: { 'last-event-id': `${key}:1`, ...MALLORY } }), { key });
      assert.equal(upstream.seen.length, before, 'nothing reached the upstream');
      const again = readStream(proxy.url(), { method: 'GET', headers: { 'last-event-id': `${key}:1`, ...ALICE } });
      upstream.release(runId);
      const resumed = await again;
      assert.equal(resumed.status, 200);
      assert.equal(resumed.headers.get('x-agui-resume'), 'exact');
      assert.equal(resumed.events.at(-1).data.type, 'RUN_FINISHED');
    });

    test('edits: mallory\'s edit is not applied and nothing of alice\'s goes upstream with it; alice\'s edit applies', async () => {
      const { runId, result } = await aliceRun('t-edit', 'r-edit0');
      upstream.release(runId);
      const seq = lastSeq(result);
      const before = upstream.seen.length;
      const refused = await post(proxy.url(), runInput('t-edit', 'r-edit1', { forwardedProps: editsOf('mallory-payee', seq) }), MALLORY);
      assert.equal(refused.status, 401, 'the backend\'s answer');
      assert.ok(!refused.text.includes(PAYEE));
      const forwarded = upstream.seen.slice(before);
      assert.equal(forwarded.length, 1);
      assert.deepEqual(forwarded[0].input.state, {}, 'her own state, not alice\'s merged one');
      assert.equal(forwarded[0].input.forwardedProps.stateSync, undefined);
      const view = await attach(proxy.url(), 't-edit', ALICE);
      assert.ok(!view.text.includes('mallory-payee'), 'alice\'s state is hers');
      const mine = await post(proxy.url(), runInput('t-edit', 'r-edit2', { state: { payee: PAYEE }, forwardedProps: editsOf('bob', seq) }), ALICE);
      assert.equal(mine.status, 200);
      assert.equal(upstream.seen.at(-1).input.state.payee, 'bob', 'alice\'s edit went upstream with her state');
    });

    test('approvals: a made-up one reads nothing; a copy sent first claims nothing; alice\'s runs once', async () => {
      const { runId } = await aliceRun('t-pay', 'r-pay0');
      upstream.release(runId);
      const bogus = await post(proxy.url(), runInput('t-pay', 'r-pay1', { resume: [entry(approvalOf('nobody'))] }), MALLORY);
      assertNothingOf(bogus);
      const copy = [entry(approvalOf(PAYEE))];
      assertNothingOf(await post(proxy.url(), runInput('t-pay', 'r-pay2', { resume: copy }), MALLORY));
      assertNothingOf(await post(proxy.url(), runInput('t-pay', 'r-pay2', { resume: copy }), {}));
      assert.deepEqual(upstream.effects, [], 'nothing was paid');
      const genuine = await post(proxy.url(), runInput('t-pay', 'r-pay3', { resume: copy, forwardedProps: { hold: true } }), ALICE,
        (events) => events.some((e) => e.data.type === 'TEXT_MESSAGE_END'));
      assert.equal(genuine.status, 200);
      // A copy sent during her approved run: no attach to it, nothing of it.
      assertNothingOf(await post(proxy.url(), runInput('t-pay', 'r-pay3b', { resume: copy }), MALLORY), { runId: 'r-pay3' });
      upstream.release('r-pay3');
      assert.deepEqual(upstream.effects, ['r-pay3'], 'alice\'s approved action ran');
      const resent = await post(proxy.url(), runInput('t-pay', 'r-pay4', { resume: copy }), ALICE);
      assert.equal(resent.events.at(-1).data.type, 'RUN_FINISHED');
      assert.deepEqual(upstream.effects, ['r-pay3'], 'once');
    });

    test('the backend refuses an authorized requester\'s approved run: the claim is released, the grant dropped', async () => {
      const { runId } = await aliceRun('t-revoked', 'r-rv0');
      upstream.release(runId);
      const copy = [entry(approvalOf(PAYEE))];
      upstream.answer.refuseAll = true;
      try {
        const refused = await post(proxy.url(), runInput('t-revoked', 'r-rv1', { resume: copy }), ALICE);
        assert.equal(refused.status, 401, 'the backend\'s answer');
        assert.deepEqual(upstream.effects.filter((id) => id.startsWith('r-rv')), []);
        assert.equal((await attach(proxy.url(), 't-revoked', ALICE)).status, 403, 'the refusal dropped the grant');
      } finally {
        upstream.answer.refuseAll = false;
      }
      const { runId: again } = await aliceRun('t-revoked', 'r-rv2'); // accepted again: authorized again
      upstream.release(again);
      const approved = await post(proxy.url(), runInput('t-revoked', 'r-rv3', { resume: copy }), ALICE);
      assert.equal(approved.events.at(-1).data.type, 'RUN_FINISHED');
      assert.deepEqual(upstream.effects.filter((id) => id.startsWith('r-rv')), ['r-rv3'], 'the released approval was not consumed');
    });

    test('a refused backend answer reaches the client as it was; nothing is created, nothing claimed', async () => {
      const threads = proxy.proxy.stats().threads;
      const refused = await fetch(proxy.url(), { method: 'POST', headers: { 'content-type': 'application/json', ...MALLORY },
        body: JSON.stringify(runInput('t-new', 'r-new')) });
      assert.equal(refused.status, 401);
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
      assert.deepEqual(await refused.json(), { error: 'unauthorized' });
      assert.equal(proxy.proxy.stats().threads, threads, 'no thread created');
      assert.equal((await attach(proxy.url(), 't-new', MALLORY)).status, 403);
    });

    test('seeded hostile requests (headers, ids, bodies) never leak a byte of alice\'s thread nor change it', async () => {
      const { key, runId } = await aliceRun('t-fuzz', 'r-fuzz');
      let seed = kind === 'redis' ? 3801 : 3800;
      const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
      const pick = (list) => list[next() % list.length];
      const ids = ['t-fuzz', `run:${key}`, key, runId, 'grant', 't-fuzz}:x', ''];
      const bodies = [
        () => runInput(pick(ids) || 't-fuzz', pick(ids) || runId),
        () => runInput('t-fuzz', runId, { resume: [entry(approvalOf(PAYEE))] }),
        () => runInput('t-fuzz', `r${next()}`, { forwardedProps: editsOf('mallory') }),
        () => runInput('t-fuzz', `r${next()}`, { forwardedProps: { stateSync: { lastSeq: next() % 5, epoch: 'x' } } }),
        () => ({ threadId: 't-fuzz', runId: 7 }),
      ];
      const before = upstream.seen.length;
      const paid = upstream.effects.length;
      for (let i = 0; i < 120; i++) {
        const headers = { ...pick([MALLORY, {}, { authorization: 'Bearer alice ' }, { authorization: 'bearer alice' }]) };
        if (next() % 2) headers['last-event-id'] = pick([`${key}:1`, `${key}:${next() % 9}`, `${key}:x`, 'x:1']);
        if (next() % 3 === 0) headers['x-agui-attach'] = pick(ids) || 't-fuzz';
        if (next() % 4 === 0) Object.assign(headers, { 'x-agui-state-seq': String(next() % 4), 'x-agui-state-epoch': 'e' });
        const method = headers['x-agui-attach'] !== undefined || next() % 4 === 0 ? 'GET' : 'POST';
        const response = await fetch(proxy.url(), { method, headers: { 'content-type': 'application/json', ...headers },
          body: method === 'POST' ? JSON.stringify(pick(bodies)()) : undefined });
        const text = await response.text();
        assert.ok(!text.includes(PAYEE) && !text.includes(SECRET) && !text.includes(key), `request ${i} leaked: ${text.slice(0, 200)}`);
        assert.equal(response.headers.get('x-agui-resume'), null);
      }
      const mallorySent = upstream.seen.slice(before);
      assert.ok(mallorySent.every((r) => !JSON.stringify(r.input).includes(PAYEE)), 'nothing of alice\'s state went upstream');
      upstream.release(runId);
      const view = await attach(proxy.url(), 't-fuzz', ALICE);
      assert.ok(view.text.includes(PAYEE) && !view.text.includes('mallory'), 'alice\'s thread is as she left it');
      assert.equal(upstream.effects.length, paid, 'nothing was paid');
    });

    test('attaches to 500 new threadIds create nothing and evict nothing', async () => {
      const { runId } = await aliceRun('t-keep', 'r-keep');
      upstream.release(runId);
      const threads = proxy.proxy.stats().threads;
      for (let i = 0; i < 500; i++) assert.equal((await attach(proxy.url(), `flood-${i}`, MALLORY)).status, 403);
      assert.equal(proxy.proxy.stats().threads, threads);
      const kept = await attach(proxy.url(), 't-keep', ALICE);
      assert.ok(kept.text.includes(PAYEE), 'alice\'s thread is still held');
    });
  });
}

describe('the authorize option', () => {
  let upstream;
  let proxy;
  before(async () => {
    upstream = await authUpstream();
    const authorize = async ({ kind, threadId, headers }) => {
      if (headers.authorization === 'Bearer throws') throw new Error('the check failed');
      return headers.authorization === 'Bearer bob' && threadId === 't-hook' && kind === 'attach' ? true : undefined;
    };
    proxy = await stackOn(upstream, { authorize });
  });
  after(() => proxy.close());

  test('only true authorizes; undefined and a throw refuse (and the throw is reported)', async () => {
    const run = post(proxy.url(), runInput('t-hook', 'r-hook'), ALICE);
    assert.equal((await run).status, 200);
    assert.equal((await attach(proxy.url(), 't-hook', { authorization: 'Bearer bob' })).status, 200);
    assertNothingOf(await attach(proxy.url(), 't-hook', MALLORY));
    assertNothingOf(await attach(proxy.url(), 't-hook', { authorization: 'Bearer throws' }));
    assert.match(proxy.errors.at(-1).message, /the check failed/);
  });
});

describe('authorizeUrl (the CLI\'s --authorize-url), maxRunClients', () => {
  test('an auth endpoint in the manner of nginx auth_request: its 2xx authorizes, anything else refuses', async () => {
    const asked = [];
    const auth = await serve((req, res) => {
      asked.push({ thread: decodeURIComponent(req.headers['x-agui-thread']), access: req.headers['x-agui-access'], auth: req.headers.authorization });
      res.writeHead(req.headers.authorization === 'Bearer bob' ? 204 : 403).end();
    });
    const upstream = await authUpstream();
    const { authorizeUrl } = await import(join(jsDir, 'src', 'proxy.js'));
    const proxy = await stackOn(upstream, { authorize: authorizeUrl(auth.url('/check')) });
    try {
      assert.equal((await post(proxy.url(), runInput('t-url', 'r1'), ALICE)).status, 200);
      assert.equal((await attach(proxy.url(), 't-url', { authorization: 'Bearer bob' })).status, 200);
      assertNothingOf(await attach(proxy.url(), 't-url', MALLORY));
      // Alice's first run was asked about too (its no still lets the run go to the backend, which accepted it).
      assert.deepEqual(asked.map((a) => [a.thread, a.access, a.auth]),
        [['t-url', 'start', 'Bearer alice'], ['t-url', 'attach', 'Bearer bob'], ['t-url', 'attach', 'Bearer mallory']]);
    } finally {
      await proxy.close();
      await auth.close();
    }
  });

  test('the CLI: --authorize-url asks the endpoint; --ops-host puts the operations port on its own address', async () => {
    const auth = await serve((req, res) => res.writeHead(req.headers.authorization === 'Bearer bob' ? 200 : 401).end());
    const upstream = await authUpstream();
    const cli = await startProxyCli(['--upstream', upstream.url, '--port', '0', '--host', '127.0.0.1', '--authorize-url', auth.url('/check'),
      '--ops-port', '0', '--ops-host', '127.0.0.2']);
    try {
      const ops = await until(() => /operations on (http:\/\/\S+)/.exec(cli.output())?.[1], 'the operations port');
      assert.equal(new URL(ops).hostname, '127.0.0.2');
      assert.equal((await post(cli.url, runInput('t-cli', 'r1'), ALICE)).status, 200);
      assert.equal((await attach(cli.url, 't-cli', { authorization: 'Bearer bob' })).status, 200);
      assertNothingOf(await attach(cli.url, 't-cli', MALLORY));
      assertNothingOf(await attach(cli.url, 't-cli', {}));
    } finally {
      assert.equal(await cli.stop(), 0, cli.output());
      await upstream.close();
      await auth.close();
    }
  });

  test('maxRunClients: one more connection to a run is a 503, the run goes on', async () => {
    const upstream = await authUpstream();
    const proxy = await stackOn(upstream, { maxRunClients: 2 });
    try {
      // The starter keeps its connection: it reads its stream to the end.
      const starter = readStream(proxy.url(), { input: runInput('t-cap', 'r-cap', { forwardedProps: { hold: true } }), headers: ALICE });
      await until(() => upstream.held('r-cap'), 'the run to be held');
      const second = readStream(proxy.url(), { method: 'GET', headers: { 'x-agui-attach': 't-cap', ...ALICE } });
      await until(() => proxy.proxy.stats().attaches.run === 1, 'the attach');
      const refused = await fetch(proxy.url(), { headers: { 'x-agui-attach': 't-cap', ...ALICE } });
      assert.equal(refused.status, 503);
      assert.equal((await refused.json()).error.code, 'limit-exceeded');
      upstream.release('r-cap');
      for (const stream of await Promise.all([starter, second])) assert.equal(stream.events.at(-1).data.type, 'RUN_FINISHED');
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });
});
