// A child process for fleet.test.mjs (not a test file): one server instance of
// a fleet sharing thread KEY through Redis. GET /stream: the catch-up (logged
// as a JSON line on stdout), heartbeats, then every event of the thread
// (emitter.subscribe: this instance's writes and, polled from Redis, the other
// one's); POST /update { state }: the agent's next state; POST /resume
// { interruptId, approval }: consumeApproval, then a payment once per effectKey.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { jsDir, pkg } from './support.mjs';

const { consumeApproval, HEADER_CATCH_UP, redisStore, startHeartbeat } = await import(join(jsDir, 'src', 'server.js'));
const { readResyncRequest } = await import(join(jsDir, 'src', 'server.js'));
const { REDIS_URL, PORT, KEY, NAME } = process.env;
const store = redisStore({ url: REDIS_URL, prefix: 'fleet:', logger: { warn: () => {}, info: () => {} } });
const emitter = await pkg.createStateEmitter({ store, key: KEY, initialState: JSON.parse(process.env.INITIAL) });
const clients = new Set();
const PAY = "if redis.call('SET', KEYS[1], '1', 'NX') then return redis.call('INCRBY', KEYS[2], ARGV[1]) end return false";

const log = (record) => process.stdout.write(`${JSON.stringify({ instance: NAME, ...record })}\n`);

function stream(req, res) {
  res.setHeader('content-type', 'text/event-stream');
  res.setHeader('cache-control', 'no-store');
  const asked = readResyncRequest(req);
  // The catch-up and joining the fan-out in one step: no event falls between them.
  emitter.withCatchUp((catchUp) => {
    const answer = catchUp(req);
    res.setHeader(HEADER_CATCH_UP, answer.mode);
    res.write(answer.events.map((e) => emitter.encode(e)).join('') || ': caught up\n\n');
    log({ kind: 'catch-up', mode: answer.mode, lastSeq: asked.lastSeq, epoch: asked.epoch, reason: asked.reason, at: emitter.seq, current: emitter.epoch });
    clients.add(res);
  }).then(() => {
    startHeartbeat(res, emitter, 150);
    res.on('close', () => clients.delete(res));
  }, () => res.destroy());
}

emitter.subscribe((events) => {
  const text = events.map((e) => emitter.encode(e)).join(''); // encoded once for every client
  for (const res of clients) res.write(text);
}, { pollMs: 50 });

async function update({ state }) {
  const events = await emitter.update(state);
  return { seq: events.at(-1)?.metadata['agui-state-sync'].seq ?? null, epoch: emitter.epoch };
}

async function resume({ interruptId, approval }) {
  await emitter.refresh();
  const proposal = emitter.state.proposal;
  const decision = await consumeApproval(approval, emitter.state, { store, threadId: KEY, interruptId });
  log({ kind: 'consume', interruptId, ok: decision.ok, replayed: decision.replayed, reason: decision.reason });
  if (decision.ok) {
    const client = await store.client();
    await client.sendCommand(['EVAL', PAY, '2', `payment:${decision.effectKey}`, 'payments:total', String(proposal?.amount ?? 0)]);
  }
  return decision;
}

const routes = { '/update': update, '/resume': resume };
const server = createServer((req, res) => {
  if (req.method === 'GET') return stream(req, res);
  let text = '';
  req.on('data', (chunk) => { text += chunk; });
  req.on('end', () => {
    routes[req.url](JSON.parse(text)).then((body) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    }, (error) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: error.message, code: error.code }));
    });
  });
});
server.listen(Number(PORT), '127.0.0.1', () => log({ kind: 'listening' }));
