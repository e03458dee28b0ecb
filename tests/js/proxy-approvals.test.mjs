// The proxy checks approvals for a backend that cannot (issue 24, section 2;
// js/src/proxy/approvals.js over the core's gate, src/facade/approval_gate.h):
// a stale approval never reaches the upstream (RUN_ERROR 'approval-stale'), a
// re-sent resume does not reach it again, another approval for a consumed
// interrupt is refused ('already-consumed'), a malformed one is refused
// ('invalid-request'), and the record in the proxy's store is the one
// consumeApproval writes. The upstream is a plain AG-UI server that counts
// the resumes it received: the effect an approval authorizes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { readStream, resumeCountingUpstream, runInput, stackOn } from './proxy-support.mjs';
import { jsDir, pkg } from './support.mjs';

const { effectKey, memoryStore } = await import(join(jsDir, 'src', 'server.js'));
const PROPOSAL = { payee: 'ACME', amount: 120 };

// Every run sends the proposal (the one a run asks for in forwardedProps.proposal:
// another tab's request to change it); a run whose input carries a resume pays once.
const countingUpstream = () => resumeCountingUpstream((input, paid) => [
  { type: 'STATE_SNAPSHOT', snapshot: { proposal: input.forwardedProps?.proposal ?? PROPOSAL, paid } },
]);

const approvalOf = (value, extra = {}) => ({ path: '/proposal', seq: 1, digest: pkg.stateDigest(value), epoch: null, ...extra });
const entry = (approval, interruptId = 'i1') => ({ interruptId, status: 'resolved', payload: { approved: true, approval } });

let upstream;
let proxy;
let store;
before(async () => {
  await pkg.initEngine();
  upstream = await countingUpstream();
  store = memoryStore();
  proxy = await stackOn(upstream, { store });
});
after(() => proxy.close());

const post = async (runId, resume, threadId = 't') => (await readStream(proxy.url(), { input: runInput(threadId, runId, resume ? { resume } : {}) })).events.map((e) => e.data);

test('a stale approval never reaches the upstream, and consumes nothing', async () => {
  await post('s1', null, 'stale');
  const answer = await post('s2', [entry(approvalOf({ ...PROPOSAL, amount: 100 }))], 'stale');
  assert.equal(answer[0].type, 'RUN_STARTED');
  assert.equal(answer.at(-1).type, 'RUN_ERROR');
  assert.equal(answer.at(-1).code, 'approval-stale');
  assert.match(answer.at(-1).message, /nothing was forwarded/);
  assert.deepEqual(answer.find((e) => e.type === 'STATE_SNAPSHOT')?.snapshot.proposal, PROPOSAL, 'the catch-up shows the current value');
  assert.deepEqual(upstream.effects, []);
  assert.equal(await store.peek('stale', 'i1'), null);
  // A thread this requester was never accepted for: refused before anything is judged (SECURITY.md).
  const unknown = await readStream(proxy.url(), { input: runInput('never-seen', 'n1', { resume: [entry(approvalOf(PROPOSAL))] }) });
  assert.equal(unknown.status, 403);
  assert.deepEqual(upstream.effects, []);
});

test('a verified approval is forwarded once; a re-sent resume and another approval are not', async () => {
  await post('r1');
  const approval = approvalOf(PROPOSAL);
  const first = await post('r2', [entry(approval)]);
  assert.equal(first.at(-1).type, 'RUN_FINISHED');
  assert.deepEqual(upstream.effects, ['r2']);
  const record = JSON.parse(await store.peek('t', 'i1'));
  assert.equal(record.effectKey, effectKey(approval, { threadId: 't', interruptId: 'i1' }), 'consumeApproval\'s record');
  const again = await post('r3', [entry(approval)]);
  assert.equal(again.at(-1).type, 'RUN_FINISHED');
  const other = await post('r4', [entry(approvalOf(PROPOSAL, { seq: 2 }))]);
  assert.equal(other.at(-1).code, 'already-consumed');
  assert.deepEqual(upstream.effects, ['r2'], 'the upstream acted once');
});

test('malformed approvals are refused; entries that are not ours pass', async () => {
  await post('m1', null, 'm');
  const noDigest = await post('m2', [entry({ path: '/proposal' })], 'm');
  assert.equal(noDigest.at(-1).code, 'invalid-request');
  const twice = await post('m3', [entry(approvalOf(PROPOSAL)), entry(approvalOf(PROPOSAL))], 'm');
  assert.equal(twice.at(-1).code, 'invalid-request');
  assert.deepEqual(upstream.effects.filter((id) => id.startsWith('m')), []);
  // A resolved entry without a payload is the upstream's to judge (it crashed the proxy before the core decided).
  const plain = await post('m4', [{ interruptId: 'i9', status: 'resolved' }], 'm');
  assert.equal(plain.at(-1).type, 'RUN_FINISHED');
  assert.deepEqual(upstream.effects.filter((id) => id.startsWith('m')), ['m4']);
});

test('two tabs: B moves the proposal after A approved it; A\'s approval never reaches the upstream', async () => {
  await post('a1', null, 'tabs'); // tab A sees the proposal ...
  const approvalA = approvalOf(PROPOSAL); // ... and its person approves it
  const moved = { payee: 'Other Travel', amount: 9000 };
  const tabB = await readStream(proxy.url(), { input: runInput('tabs', 'b1', { forwardedProps: { proposal: moved } }) });
  assert.equal(tabB.events.at(-1).data.type, 'RUN_FINISHED');
  const answer = await post('a2', [entry(approvalA)], 'tabs');
  assert.equal(answer.at(-1).code, 'approval-stale');
  assert.deepEqual(answer.find((e) => e.type === 'STATE_SNAPSHOT')?.snapshot.proposal, moved, 'tab A\'s guard is shown the proposal B made');
  assert.deepEqual(upstream.effects.filter((id) => id.startsWith('a')), [], 'the upstream never saw A\'s resume');
  // A's person approves what B made: paid once.
  assert.equal((await post('a3', [entry(approvalOf(moved))], 'tabs')).at(-1).type, 'RUN_FINISHED');
  assert.deepEqual(upstream.effects.filter((id) => id.startsWith('a')), ['a3']);
});
