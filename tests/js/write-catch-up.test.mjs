// writeCatchUp() keeps a plain StateEmitter's encoded answer while the same
// position comes back at the same state (issue 27, item 5: a fan-out's clients
// connect at one seq, and parsing and encoding one answer per client was the
// memory an idle client cost above a bare SSE server). Seeded: whatever the
// writes and positions in between, every answer is byte for byte what the
// core answers now, the emitter's stats count each catch-up as before, and a
// reader of one answer's events cannot change another's.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { jsDir, pkg, rng } from './support.mjs';

const { catchUp, writeCatchUp } = await import(join(jsDir, 'src', 'server.js'));
const { createStateEmitter } = pkg;

function response() {
  const res = { headersSent: false, headers: {}, text: '' };
  res.setHeader = (name, value) => { res.headers[name.toLowerCase()] = value; };
  res.write = (text) => { res.text += text; };
  return res;
}

/** The bytes and mode the core answers `request` with now, written the way writeCatchUp writes them. */
function fresh(emitter, request) {
  const answer = catchUp(emitter, request);
  const beat = answer.mode === 'current' ? emitter.heartbeat() : '';
  return { mode: answer.mode, text: answer.events.map((e) => emitter.encode(e)).join('') + beat, events: answer.events };
}

// A request at a position drawn from what the emitter has sent (none, current, behind, ahead, another epoch, a reason, held seqs).
function positionOf(next, emitter) {
  const headers = {};
  const kind = Math.floor(next() * 7);
  if (kind === 0) return { headers };
  const seq = emitter.seq;
  headers['x-agui-state-epoch'] = kind === 4 ? 'another-epoch' : emitter.epoch;
  headers['x-agui-state-seq'] = String(kind === 1 ? seq : kind === 5 ? seq + 3 : Math.max(0, seq - 1 - Math.floor(next() * 6)));
  if (kind === 3) headers['x-agui-state-reason'] = next() < 0.5 ? 'gap' : 'digest-mismatch';
  if (kind === 6 && seq > 3) headers['x-agui-state-held'] = String(seq);
  return { headers };
}

async function write(emitter, next, step) {
  const choice = next();
  if (choice < 0.5) await emitter.update({ step, items: Array.from({ length: 1 + (step % 7) }, (_, i) => `item ${i} of ${step}`) });
  else if (choice < 0.8) emitter.patch([{ op: 'replace', path: '/step', value: -step }]);
  else emitter.applyEdits([{ editId: `e${step}`, baseSeq: emitter.seq, ops: [{ op: 'add', path: '/note', value: `edit ${step}` }] }]);
}

for (const seed of [1, 2, 3, 4, 5]) {
  test(`seed ${seed}: every answer is the core's answer now, the stats count every catch-up, readers do not share events`, async () => {
    const next = rng(seed);
    const options = { initialState: { step: 0, items: [] }, replayMaxEvents: 6, epoch: 'e1' };
    const served = await createStateEmitter(options); // answers writeCatchUp
    const counted = await createStateEmitter(options); // the same writes, answered by catchUp() only
    try {
      for (let step = 1; step <= 60; step++) {
        if (next() < 0.3) for (const emitter of [served, counted]) await write(emitter, rng(seed * 1000 + step), step);
        for (let k = Math.floor(next() * 4); k >= 0; k--) {
          const request = positionOf(next, served);
          const res = response();
          const answer = writeCatchUp(res, served, request);
          const expected = fresh(counted, request);
          assert.equal(res.headers['x-agui-state-sync'], expected.mode, `step ${step}`);
          assert.equal(answer.mode, expected.mode);
          assert.equal(res.text, expected.text, `step ${step}: the bytes`);
          assert.deepEqual(answer.events, expected.events);
          answer.events.push({ type: 'CUSTOM', name: 'mine' }); // a reader's own copy
        }
      }
      assert.deepEqual(served.stats(), counted.stats(), 'catch-ups counted as the core counts them');
    } finally {
      served.dispose();
      counted.dispose();
    }
  });
}

test('a fan-out of position-less clients: one answer parsed and encoded, the same bytes to each', async () => {
  const emitter = await createStateEmitter({ initialState: { big: 'x'.repeat(4096) } });
  try {
    const texts = new Set();
    for (let i = 0; i < 50; i++) {
      const res = response();
      writeCatchUp(res, emitter, { headers: {} });
      texts.add(res.text);
    }
    assert.equal(texts.size, 1);
    assert.equal(emitter.stats().replaySnapshots, 50, 'each client counted');
    await emitter.update({ big: 'y'.repeat(4096) });
    const res = response();
    writeCatchUp(res, emitter, { headers: {} });
    assert.notEqual(res.text, [...texts][0], 'a write makes a new answer');
    assert.match(res.text, /"big":"y{4096}"/);
  } finally {
    emitter.dispose();
  }
});
