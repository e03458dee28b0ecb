// Checkpoints (issue 16): what persist costs. Not a test: it prints.
//  - feed(): µs per delta with and without persist (memoryStorage), the
//    writer running between feeds as it would between stream chunks;
//  - one checkpoint write (serialize + SHA-256 + set) after a delta, and one
//    after a call that moved only lastEventId (the state's text is reused);
//  - a restore: createStateSync reading, checking and restoring a checkpoint.
// At 5 / 50 / 500 KB of state, median of `runs`.
//
//   node --expose-gc bench/js/bench_persist.mjs [runs=5] [deltas=400]
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const { createStateEmitter, createStateSync, memoryStorage } = await import(join(here, '..', '..', 'js', 'src', 'index.js'));

const runs = Number(process.argv[2] ?? 5);
const deltas = Number(process.argv[3] ?? 400);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const tick = () => new Promise((resolve) => setImmediate(resolve));

// A state of about `kb` KB: rows of a table; each delta changes one cell.
function stateOf(kb) {
  const rows = Array.from({ length: Math.round(kb * 1024 / 100) }, (_, i) => ({ id: i, name: `row ${i} ${'x'.repeat(60)}`, done: false }));
  return { rows, counter: 0 };
}

async function workload(kb) {
  const emitter = await createStateEmitter({ epoch: 'E', initialState: stateOf(kb), snapshotRatio: 100 });
  const snapshot = emitter.encode(emitter.snapshot());
  const events = [];
  for (let i = 0; i < deltas; i++) {
    for (const e of emitter.patch([{ op: 'replace', path: `/rows/${i % 50}/done`, value: i % 2 === 0 }])) events.push(emitter.encode(e));
  }
  emitter.dispose();
  return { snapshot, events };
}

// µs per feed() of one delta; with `storage`, the writer gets one event-loop
// turn after each feed (`turns`), or none: back to back, only feed()'s own
// share of persistence is timed (one write at the end).
async function feedCost(load, storage, turns = true) {
  const sync = await createStateSync(storage ? { persist: { key: 'k', storage } } : undefined);
  sync.feed(load.snapshot);
  await sync.flush();
  let spent = 0;
  for (const text of load.events) {
    const t0 = performance.now();
    sync.feed(text);
    spent += performance.now() - t0;
    if (turns) await tick();
  }
  await sync.flush();
  const writes = sync.persistence?.writes ?? 0;
  sync.dispose();
  return { us: (spent / load.events.length) * 1000, writes };
}

// ms for one write after a delta, and after a call that moved only lastEventId.
async function writeCost(load) {
  const storage = memoryStorage();
  const sync = await createStateSync({ persist: { key: 'k', storage } });
  sync.feed(load.snapshot);
  await sync.flush();
  const afterDelta = [];
  const afterId = [];
  for (let i = 0; i < 20; i++) {
    sync.feed(load.events[i]);
    let t0 = performance.now();
    await sync.flush();
    afterDelta.push(performance.now() - t0);
    sync.feed(`id: chat-${i}\ndata: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"."}\n\n`);
    t0 = performance.now();
    await sync.flush();
    afterId.push(performance.now() - t0);
  }
  const bytes = storage.entries.get('k').length;
  sync.dispose();
  return { delta: median(afterDelta), id: median(afterId), storage, bytes };
}

async function restoreCost(storage) {
  const times = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const sync = await createStateSync({ persist: { key: 'k', storage } });
    times.push(performance.now() - t0);
    if (sync.persistence.restore !== 'restored') throw new Error(`restore: ${sync.persistence.restore}`);
    sync.dispose();
    await sync.flush();
  }
  return median(times);
}

const rows = [];
for (const kb of [5, 50, 500]) {
  const load = await workload(kb);
  const plain = [];
  const persisted = [];
  const backToBack = [[], []];
  const write = [];
  const idWrite = [];
  const restore = [];
  let writes = 0;
  let bytes = 0;
  for (let r = 0; r < runs; r++) {
    globalThis.gc?.();
    plain.push((await feedCost(load, null)).us);
    backToBack[0].push((await feedCost(load, null, false)).us);
    backToBack[1].push((await feedCost(load, memoryStorage(), false)).us);
    const withPersist = await feedCost(load, memoryStorage());
    persisted.push(withPersist.us);
    writes = withPersist.writes;
    const w = await writeCost(load);
    write.push(w.delta);
    idWrite.push(w.id);
    bytes = w.bytes;
    restore.push(await restoreCost(w.storage));
  }
  rows.push({
    state: `${kb} KB`,
    'checkpoint KB': (bytes / 1024).toFixed(1),
    'feed µs/delta, back to back': `${median(backToBack[0]).toFixed(2)} / ${median(backToBack[1]).toFixed(2)}`,
    'feed µs/delta': median(plain).toFixed(2),
    'feed µs/delta, persist': median(persisted).toFixed(2),
    [`writes for ${deltas} feeds`]: writes,
    'write ms (delta)': median(write).toFixed(2),
    'write ms (lastEventId only)': median(idWrite).toFixed(2),
    'restore ms': median(restore).toFixed(2),
  });
}
console.log(`bench_persist: median of ${runs} runs, ${deltas} deltas each (memoryStorage: the adapter costs nothing here).`);
console.log('"back to back": without / with persist, feeds in a loop (the writer runs once, after it); the other two: one event-loop turn after each feed, the writer running in it.');
console.table(rows);
