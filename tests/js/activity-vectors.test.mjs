// The activity wire vectors (tests/vectors/activity_vectors.json, generated and
// checked by the native suite; docs/wire.md section 11) replayed through the
// package: emitter.activities must write the same bytes, drop the same events
// and answer the same catch-ups, and createStateSync({ activities: true }) must
// report the same outcomes and activities after every step.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { catchUp } from '../../js/src/server.js';
import { pkg, plain, repoRoot } from './support.mjs';

const doc = JSON.parse(readFileSync(join(repoRoot, 'tests', 'vectors', 'activity_vectors.json'), 'utf8'));

function summary(o) {
  const s = { kind: o.kind };
  if (o.type !== undefined && o.kind === 'applied') s.type = o.type;
  if (o.kind === 'event') s.type = o.event.type;
  if (o.messageId !== undefined) s.messageId = o.messageId;
  if (o.kind === 'resync' || o.kind === 'ignored') s.reason = o.reason;
  if (o.kind === 'error') s.code = o.code;
  if ((o.kind === 'applied' || o.kind === 'ignored') && o.seq !== null && o.seq !== undefined) s.seq = o.seq;
  return s;
}

function activitiesOf(sync) {
  return Object.values(sync.activities)
    .sort((a, b) => (a.messageId < b.messageId ? -1 : 1))
    .map((a) => ({ messageId: a.messageId, status: a.status, lastSeq: a.lastSeq, epoch: a.epoch, content: plain(a.content) }));
}

test('the vector file covers sending and receiving', () => {
  assert.ok(doc.send.length >= 3 && doc.receive.length >= 6);
});

for (const vector of doc.send) {
  test(`activity vector (send): ${vector.name}`, async () => {
    const emitter = await pkg.createStateEmitter(vector.options);
    try {
      vector.steps.forEach((step, i) => {
        const where = `${vector.name} step ${i}`;
        const encode = (events) => events.map((e) => emitter.activities.encode(e)).join('');
        if ('write' in step) {
          const written = emitter.activities.write(step.write);
          assert.equal(encode(written.events), step.expect.sse, where);
          assert.equal(written.dropped, step.expect.dropped, where);
          return;
        }
        const stateSync = { lastSeq: 0, epoch: vector.options.epoch, ...step.catchUp };
        const answer = catchUp(emitter, { forwardedProps: { stateSync } });
        assert.equal(answer.mode, 'current', where);
        assert.equal(encode(answer.events), step.expect.sse, where);
        assert.deepEqual(answer.activities ?? [], step.expect.modes, where);
      });
    } finally {
      emitter.dispose();
    }
  });
}

for (const vector of doc.receive) {
  test(`activity vector (receive): ${vector.name}`, async () => {
    const sync = await pkg.createStateSync({ activities: true });
    try {
      vector.steps.forEach((step, i) => {
        const where = `${vector.name} step ${i}`;
        const outcomes = 'feed' in step ? sync.feed(step.feed) : sync.end();
        assert.deepEqual(outcomes.map(summary), step.expect.outcomes, where);
        assert.deepEqual(activitiesOf(sync), step.expect.activities, where);
      });
    } finally {
      sync.dispose();
    }
  });
}
