// The server process of bench_fanout.mjs (forked with --server-child <store> <redisUrl>):
// one emitter (no store, or bound to a key in Redis), an SSE endpoint that
// answers the catch-up and joins the fan-out, and commands over IPC. Store
// 'bare': the physical limit for idle clients (issue 27, item 5): a plain Node
// http SSE server, no emitter, that writes one fixed snapshot event and holds
// the connection in the same Set.
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { createStateEmitter } = await import(join(root, 'js', 'src', 'index.js'));
const { redisStore, writeCatchUp } = await import(join(root, 'js', 'src', 'server.js'));
const [, , , kind, redisUrl] = process.argv;
const items = Array.from({ length: 20 }, (_, i) => ({ id: i, label: `item ${i}`.padEnd(80, '.') })); // a ~2 KB state
const stateAt = (n) => ({ t: performance.timeOrigin + performance.now(), n, items });
const store = kind === 'redis' ? redisStore({ url: redisUrl, prefix: 'bench:' }) : null;
const bare = kind === 'bare';
const emitter = bare ? null : await createStateEmitter({ ...(store ? { store, key: `thread-${Date.now()}` } : {}), initialState: stateAt(0) });
const BARE_EVENT = `data: ${JSON.stringify({ type: 'STATE_SNAPSHOT', snapshot: stateAt(0), metadata: { 'agui-state-sync': { seq: 1 } } })}\n\n`;
const clients = new Set();
const counters = { bytes: 0, modes: {} };
let n = 0;

async function stream(req, res) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  if (bare) {
    res.write(BARE_EVENT);
    clients.add(res);
    res.on('close', () => clients.delete(res));
    return;
  }
  const counted = { headersSent: true, write: (text) => { counters.bytes += Buffer.byteLength(text); res.write(text); } };
  const join = (answer) => {
    counters.modes[answer.mode] = (counters.modes[answer.mode] ?? 0) + 1;
    clients.add(res);
    res.on('close', () => clients.delete(res));
  };
  // A store-bound emitter: the catch-up and joining the fan-out in one step.
  if (store) await emitter.withCatchUp((catchUp) => join(writeResultOf(catchUp(req))));
  else join(writeCatchUp(counted, emitter, req)); // the catch-up encoded once, written as it is
  function writeResultOf(answer) {
    const text = answer.events.map((e) => emitter.encode(e)).join('');
    if (text) counted.write(text);
    return answer;
  }
}

// One update, encoded once, the same bytes written to every client.
async function update() {
  const events = await emitter.update(stateAt(++n));
  const text = events.map((e) => emitter.encode(e)).join('');
  for (const res of clients) res.write(text);
  return events.length;
}

async function run({ seconds, intervalMs }) {
  const cpu = process.cpuUsage();
  let events = 0;
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const next = Date.now() + intervalMs;
    events += await update();
    await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
  }
  const used = process.cpuUsage(cpu);
  return { events, cpuMs: (used.user + used.system) / 1000 };
}

function memory() {
  global.gc?.();
  global.gc?.();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external + m.arrayBuffers, rss: m.rss };
}

const commands = {
  listen: () => new Promise((resolve) => {
    const server = createServer((req, res) => { stream(req, res).catch(() => res.destroy()); });
    server.listen(0, '127.0.0.1', () => resolve({ port: server.address().port }));
  }),
  memory,
  run,
  updates: async ({ count }) => {
    for (let i = 0; i < count; i++) await update();
    return { seq: emitter.seq };
  },
  'reset-counters': () => { counters.bytes = 0; counters.modes = {}; return {}; },
  counters: () => ({ ...counters }),
  clients: () => ({ count: clients.size }),
};
process.on('message', async (m) => {
  const answer = await commands[m.cmd](m);
  if (process.connected) process.send({ id: m.id, ...answer });
});
process.on('disconnect', () => process.exit(0)); // the bench is gone
