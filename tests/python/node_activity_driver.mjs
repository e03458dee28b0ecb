// A Node store-bound emitter's activities driven by a Python test over stdin
// and stdout (test_fleet_activities.py), one JSON line per command and one per
// answer, in order, so that the test decides the interleaving with a Python
// emitter writing the same thread's activities (and which writes race).
//   argv: <main entry URL> <server entry URL> <redis url> <prefix> <key> <options JSON>
//   commands: {op: 'snapshot', messageId, activityType, content} | {op: 'patch', messageId, activityType, ops}
//             | {op: 'sync'} | {op: 'catchUp', request} | {op: 'close'}
//   answers:  {ok: true, events?, catchUp?, activities: {messageId: {seq, content}}, stats}
//             | {ok: false, code, message}
// Ready once it has opened the key: its first line is {ready: true, seq, epoch}.
import { createInterface } from 'node:readline';

const [mainEntry, serverEntry, url, prefix, key, optionsJson] = process.argv.slice(2);
const [{ createStateEmitter }, server] = await Promise.all([import(mainEntry), import(serverEntry)]);
const store = server.redisStore({ url, prefix });
const emitter = await createStateEmitter({ store, key, ...JSON.parse(optionsJson) });
const say = (answer) => process.stdout.write(`${JSON.stringify(answer)}\n`);
const held = new Set();

const run = {
  snapshot: async ({ messageId, activityType, content }) => (held.add(messageId), { events: await emitter.activities.snapshot(messageId, activityType, content) }),
  patch: async ({ messageId, activityType, ops }) => (held.add(messageId), { events: await emitter.activities.patch(messageId, activityType, ops) }),
  sync: async () => (await emitter.activities.sync(), {}),
  catchUp: async ({ request }) => ({ catchUp: await server.catchUp(emitter, request) }),
};

const activities = () => Object.fromEntries([...held].map((id) => [id, { seq: emitter.activities.seq(id) ?? null, content: emitter.activities.content(id) ?? null }]));

say({ ready: true, seq: emitter.seq, epoch: emitter.epoch });
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if (command.op === 'close') break;
  try {
    say({ ok: true, ...(await run[command.op](command)), activities: activities() });
  } catch (error) {
    say({ ok: false, code: error.code ?? null, message: String(error.message) });
  }
}
emitter.dispose();
await store.close();
