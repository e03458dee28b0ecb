// The proxy's approval gate on an approval of an activity's content (docs/wire.md
// sections 7, 8 and 11): an approval that names a messageId is judged against
// the thread's content of that activity (the one the proxy vouches for), never
// against the state, and one naming an activity the thread does not hold is
// refused 'approval-stale'. The upstream is a plain AG-UI server that renders a
// checkout form as activity m1 and counts the resumes it received.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readStream, resumeCountingUpstream, runInput, stackOn } from './proxy-support.mjs';
import { pkg } from './support.mjs';

const FORM = { payee: 'ACME', amount: 120 };

// The state holds the same value as the form: a gate that read the state would pass a stale form.
const formUpstream = () => resumeCountingUpstream((input) => [
  { type: 'STATE_SNAPSHOT', snapshot: FORM },
  { type: 'ACTIVITY_SNAPSHOT', messageId: 'm1', activityType: 'checkout', content: input.forwardedProps?.form ?? FORM },
]);

const approvalOf = (value, messageId = 'm1') => ({ path: '/amount', seq: 0, digest: pkg.stateDigest(value), epoch: null, messageId });
const entry = (approval, interruptId = 'i1') => ({ interruptId, status: 'resolved', payload: { approved: true, approval } });

let upstream;
let proxy;
before(async () => {
  await pkg.initEngine();
  upstream = await formUpstream();
  proxy = await stackOn(upstream, {});
});
after(() => proxy.close());

const post = async (threadId, runId, extra = {}) => (await readStream(proxy.url(), { input: { ...runInput(threadId, runId), ...extra } })).events.map((e) => e.data);

test('an approval of an activity is judged against the thread\'s content of that activity', async () => {
  await post('t', 'r1', { forwardedProps: { form: { ...FORM, amount: 99 } } }); // the form moved; the state did not
  const stale = await post('t', 'r2', { resume: [entry(approvalOf(FORM.amount))] });
  assert.equal(stale.at(-1).type, 'RUN_ERROR');
  assert.equal(stale.at(-1).code, 'approval-stale', 'the state\'s /amount has that digest, the form\'s does not');
  assert.deepEqual(upstream.effects, []);
  const ok = await post('t', 'r3', { resume: [entry(approvalOf(99))] });
  assert.equal(ok.at(-1).type, 'RUN_FINISHED');
  assert.deepEqual(upstream.effects, ['r3']);
});

test('an approval naming an activity the thread does not hold is refused, nothing forwarded', async () => {
  await post('u', 'r1');
  const missing = await post('u', 'r2', { resume: [entry(approvalOf(FORM.amount, 'm9'))] });
  assert.equal(missing.at(-1).code, 'approval-stale');
  assert.match(missing.at(-1).message, /holds no activity m9/);
  // A thread this requester was never accepted for: 403 before anything is judged (SECURITY.md).
  const never = await readStream(proxy.url(), { input: runInput('never-seen', 'r1', { resume: [entry(approvalOf(FORM.amount))] }) });
  assert.equal(never.status, 403);
  assert.ok(!upstream.effects.includes('r2'));
});
