// A child process for approvals.test.mjs (not a test file): an agent server
// that consumes approvals with consumeApproval against a thread's state in
// Redis and then pays, once per effectKey, into a counter in Redis. With
// PAUSE=consume or PAUSE=act it stops after that step (and says so on
// stdout) so that the test can kill it with SIGKILL right there.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { jsDir, pkg } from './support.mjs';

const { consumeApproval, redisStore } = await import(join(jsDir, 'src', 'server.js'));
const store = redisStore({ url: process.env.REDIS_URL, prefix: 'pay:', logger: { warn: () => {}, info: () => {} } });
const pause = process.env.PAUSE ?? '';
const emitters = new Map();

// The payment API's own idempotency: a key pays once (SET NX), atomically with the counter.
const PAY = "if redis.call('SET', KEYS[1], '1', 'NX') then return redis.call('INCRBY', KEYS[2], ARGV[1]) end return false";

async function pay(effectKey, amount) {
  const client = await store.client();
  return client.sendCommand(['EVAL', PAY, '2', `payment:${effectKey}`, 'payments:total', String(amount)]);
}

async function emitterOf(threadId) {
  if (!emitters.has(threadId)) emitters.set(threadId, pkg.createStateEmitter({ store, key: threadId }));
  return emitters.get(threadId);
}

async function resume({ threadId, interruptId, approval }) {
  const emitter = await emitterOf(threadId);
  await emitter.refresh();
  const proposal = emitter.state.proposal;
  const decision = await consumeApproval(approval, emitter.state, { store, threadId, interruptId });
  if (!decision.ok) return { status: 409, body: decision };
  process.stdout.write('consumed\n');
  if (pause === 'consume') await new Promise(() => {}); // killed here
  // A replayed decision may come after the state moved on (the proposal paid and
  // cleared): the payment's own idempotency key makes that call a no-op.
  await pay(decision.effectKey, proposal?.amount ?? 0);
  process.stdout.write('acted\n');
  if (pause === 'act') await new Promise(() => {}); // killed here
  if (proposal) await emitter.update({ ...emitter.state, proposal: null, paid: proposal });
  return { status: 200, body: decision };
}

const server = createServer((req, res) => {
  let text = '';
  req.on('data', (chunk) => { text += chunk; });
  req.on('end', () => {
    resume(JSON.parse(text)).then(({ status, body }) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    }, (error) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: error.message, code: error.code }));
    });
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
