// A Node store-bound emitter driven by a Python test over stdin/stdout, one
// JSON line per command and one per answer, in order, so that the test
// decides the interleaving with a Python emitter writing the same key.
//   argv: <main entry URL> <server entry URL> <redis url> <prefix> <key> <options JSON>
//   commands: {op: 'update', state, rebase?} | {op: 'patch', ops} | {op: 'catchUp', request}
//             | {op: 'refresh'} | {op: 'where'} | {op: 'close'}
//   answers:  {ok: true, events?, catchUp?, seq, epoch, state} | {ok: false, code, message}
// Ready once it has opened the key: its first line is {ready: true, seq, epoch}.
import { createInterface } from 'node:readline';

const [mainEntry, serverEntry, url, prefix, key, optionsJson] = process.argv.slice(2);
const [{ createStateEmitter }, server] = await Promise.all([import(mainEntry), import(serverEntry)]);
const store = server.redisStore({ url, prefix });
const emitter = await createStateEmitter({ store, key, ...JSON.parse(optionsJson) });
const where = () => ({ seq: emitter.seq, epoch: emitter.epoch, state: emitter.state });
const say = (answer) => process.stdout.write(`${JSON.stringify(answer)}\n`);

const run = {
  update: async ({ state, rebase }) => ({ events: await emitter.update(state, rebase ? { rebase: true } : undefined) }),
  patch: async ({ ops }) => ({ events: await emitter.patch(ops) }),
  catchUp: async ({ request }) => ({ catchUp: await server.catchUp(emitter, request) }),
  refresh: async () => (await emitter.refresh(), {}),
  where: async () => ({}),
};

say({ ready: true, seq: emitter.seq, epoch: emitter.epoch });
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if (command.op === 'close') break;
  try {
    say({ ok: true, ...(await run[command.op](command)), ...where(), stats: emitter.stats().store });
  } catch (error) {
    say({ ok: false, code: error.code ?? null, message: String(error.message) });
  }
}
emitter.dispose();
await store.close();
