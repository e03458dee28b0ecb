// A thread's activity record (src/emit/activity_record.h, docs/wire.md section
// 11), replayed from tests/vectors/activity_record_vectors.json: the ops each
// activity write puts on the stored record, and what an emitter holds after
// adopting a record another instance wrote. tests/python/test_activity_record_vectors.py
// replays the same file: a Node and a Python instance share one record.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot, jsDir } from './support.mjs';

const { ActivityEmitter } = await import(join(jsDir, 'src', 'server', 'activity-emitter.js'));
const { loadEmitterEngine } = await import(join(jsDir, 'src', 'server', 'emitter.js'));
const { kAdoptRecord, kTakeRecordOps } = await import(join(jsDir, 'src', 'server', 'activity-internals.js'));
const vectors = JSON.parse(readFileSync(join(repoRoot, 'tests', 'vectors', 'activity_record_vectors.json'), 'utf8'));
const engine = await loadEmitterEngine();

test('each write puts the vector\'s ops on the record, with the vector\'s events', () => {
  const emitter = ActivityEmitter.create(engine, JSON.stringify(vectors.options));
  try {
    for (const step of vectors.steps) {
      assert.deepEqual(emitter.write(step.write).events, step.events, JSON.stringify(step.write));
      assert.deepEqual(emitter[kTakeRecordOps](), step.ops, JSON.stringify(step.write));
    }
  } finally {
    emitter.dispose();
  }
});

test('an emitter that adopts a record holds what it holds, and continues its lines', () => {
  const { adopt } = vectors;
  const emitter = ActivityEmitter.create(engine, JSON.stringify({ epoch: 'e9', record: true, maxActivities: 64 }));
  try {
    assert.equal(emitter[kAdoptRecord](JSON.stringify(adopt.record)), adopt.changed);
    for (const { messageId, seq, content } of adopt.held) {
      assert.equal(emitter.seq(messageId), seq, messageId);
      assert.deepEqual(emitter.content(messageId) ?? null, content, messageId);
    }
    assert.deepEqual(emitter.write(adopt.next.write).events, adopt.next.events);
    assert.deepEqual(emitter[kTakeRecordOps](), adopt.next.ops);
    assert.throws(() => emitter[kAdoptRecord]('[1]'), { code: 'invalid-json' });
  } finally {
    emitter.dispose();
  }
});

test('the record\'s key is the library\'s own: no caller key names it', () => {
  assert.equal(engine.module.activityRecordKey(vectors.recordKey.threadKey), vectors.recordKey.key);
});
