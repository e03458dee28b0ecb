// The installed tarball's Node entries, as a user's server imports them
// (tests/install/run.sh copies this into the fresh npm project, so that
// 'agui-state-sync' resolves to node_modules there, not to js/ in the clone).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createStateEmitter, createStateSync } from 'agui-state-sync';
import { catchUp } from 'agui-state-sync/server';
import { createStateSyncProxy } from 'agui-state-sync/proxy';

const installed = fileURLToPath(import.meta.resolve('agui-state-sync'));
assert.match(installed, /\/node_modules\/agui-state-sync\//, `resolved from ${installed}`);

// agui-state-sync/server: an emitter's update, caught up as a client would
// be, encoded as SSE and applied by a receiver.
const emitter = await createStateEmitter({ epoch: 'E', initialState: { n: 1 } });
emitter.update({ n: 2 });
const { mode, events } = catchUp(emitter, { headers: {} });
const sse = events.map((e) => emitter.encode(e)).join('');
assert.equal(mode, 'snapshot');
assert.match(sse, /^data: \{.*"snapshot":\{"n":2\},"type":"STATE_SNAPSHOT"\}$/m);
const sync = await createStateSync();
sync.feed(sse);
assert.deepEqual([sync.state, sync.status], [{ n: 2 }, 'synced']);

// agui-state-sync/proxy: a proxy listening on 127.0.0.1:0, then closed.
const proxy = createStateSyncProxy({ upstream: 'http://127.0.0.1:9/' });
const server = createServer(proxy).listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
assert.ok(server.address().port > 0);
assert.equal(typeof proxy.stats(), 'object');
proxy.close();
await new Promise((resolve) => server.close(resolve));

console.log(`node entries: ok (server: ${events.length} event(s) encoded, ${sse.length} bytes; proxy: listened on 127.0.0.1 and closed)`);
