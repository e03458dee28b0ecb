// Shared helpers for the checkpoint suites (persist*.test.mjs); not a test file.
//  - ControlledStorage: a { get, set, delete } adapter whose writes the test
//    lets through one by one (commit or fail), or at once;
//  - readStored: the stored format read independently of js/src/persist
//    (node:crypto for the digest), to check what the package wrote;
//  - corruptions: the ways the suites damage a stored checkpoint.
import { createHash } from 'node:crypto';
import { until } from '../support/until.mjs';

export const KEY = 'thread-1';

/**
 * A storage adapter over a Map. `instant`: every set() commits at once;
 * otherwise each set() waits in `pending` until settle(). Counts everything.
 */
export class ControlledStorage {
  entries = new Map();
  pending = []; // [{ key, value, resolve, reject }] of set() calls not settled yet
  sets = 0; // set() calls
  commits = 0;
  maxPending = 0; // most set() calls ever in flight at once
  gets = 0;
  deletes = 0;
  failGets = false;

  constructor({ instant = true } = {}) {
    this.instant = instant;
  }

  async get(key) {
    this.gets++;
    if (this.failGets) throw new Error('storage unreadable');
    return this.entries.get(key);
  }

  set(key, value) {
    this.sets++;
    if (this.instant) {
      this.entries.set(key, value);
      this.commits++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ key, value, resolve, reject });
      this.maxPending = Math.max(this.maxPending, this.pending.length);
    });
  }

  async delete(key) {
    this.deletes++;
    this.entries.delete(key);
  }

  /** Ends the oldest pending set(): 'commit' stores it, 'fail' rejects it (nothing stored). False if none. */
  settle(fate) {
    const write = this.pending.shift();
    if (!write) return false;
    if (fate === 'commit') {
      this.entries.set(write.key, write.value);
      this.commits++;
      write.resolve();
    } else {
      write.reject(new Error('storage write failed'));
    }
    return true;
  }
}

export { until };

/**
 * Waits until storage has a write to settle for each of `syncs`' checkpoint
 * writers still running (all of them idle: none), never for a number of
 * event-loop turns: the digest runs on another thread and takes what it takes.
 * Sound because a running writer's only unbounded wait is storage.set(), which
 * nothing settles meanwhile: it reaches storage and stays pending there, or
 * the writer ends and flush() resolves. Each writer has at most one write in
 * flight, so when every writer with a pending write is in `syncs`, the count
 * reaches the running ones exactly when all of them are at storage.
 */
export async function atStorage(syncs, storage, what = 'the writers to reach storage') {
  const running = syncs.map((sync) => {
    const writer = { idle: false };
    sync.flush().then(() => {
      writer.idle = true;
    });
    return writer;
  });
  await until(() => storage.pending.length >= running.filter((w) => !w.idle).length, what);
}

/**
 * Lets `sync`'s writer run until storage holds its newest checkpoint (or it
 * was disposed and its last write ended), settling every set() it makes with
 * `fate()` ('commit' | 'fail'). While it waits to retry a failed write,
 * `advance(ms)` moves a mocked clock, or real time passes.
 */
export async function drain(sync, storage, fate = () => 'commit', advance = null) {
  for (;;) {
    await atStorage([sync], storage, 'the checkpoint writer to catch up');
    if (storage.pending.length > 0) {
      storage.settle(fate());
      continue;
    }
    const { behind, active } = sync.persistence;
    if (!behind || !active) return;
    // A failed write waits to be retried: a mocked clock moves on, or real time passes until it is under way.
    if (advance) advance(1000);
    else await until(() => storage.pending.length > 0 || !sync.persistence.behind, 'the retry of a failed write');
  }
}

/**
 * The stored text read without js/src/persist: null unless the header's
 * digest is the SHA-256 of the body; else the parsed body.
 */
export function readStored(text) {
  if (typeof text !== 'string') return null;
  const newline = text.indexOf('\n');
  if (newline < 0) return null;
  const match = /^agui-checkpoint\/1 sha256:([0-9a-f]{64})$/.exec(text.slice(0, newline));
  const body = text.slice(newline + 1);
  if (!match || createHash('sha256').update(body, 'utf8').digest('hex') !== match[1]) return null;
  try {
    return JSON.parse(body);
  } catch {
    return null;
  }
}

/** Stored text for `body` (an object), written without js/src/persist. */
export function sealed(body) {
  const text = JSON.stringify(body);
  return `agui-checkpoint/1 sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}\n${text}`;
}

/** Ways storage goes bad: each takes valid stored text and returns what a reload then reads. */
export const corruptions = {
  'a flipped character': (text, pick) => {
    const at = text.indexOf('\n') + 1 + pick(text.length - text.indexOf('\n') - 1);
    const c = text[at];
    return text.slice(0, at) + (c === 'x' ? 'y' : 'x') + text.slice(at + 1);
  },
  'a torn write': (text, pick) => text.slice(0, text.indexOf('\n') + 1 + pick(text.length - text.indexOf('\n') - 1)),
  'another digest': (text) => text.replace(/sha256:[0-9a-f]{64}/, `sha256:${createHash('sha256').update(text).digest('hex')}`),
  'no header': (text) => text.slice(text.indexOf('\n') + 1),
  'not a string': () => ({ state: {} }),
  'another key, correctly sealed': (text) => sealed({ ...readStored(text), key: 'someone-else' }),
};
