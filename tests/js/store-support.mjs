// Shared by the store tests (not a test file): the two stores under test, a
// seeded PRNG, and a real receiver engine to check what emitters sent.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { jsDir, pkg, rng } from './support.mjs';
import { RedisServer } from './redis-support.mjs';

export const server = await import(join(jsDir, 'src', 'server.js'));
const { STORE_METHODS } = await import(join(jsDir, 'src', 'server', 'store', 'contract.js'));
export const { createStateEmitter, createStateSync } = pkg;

/** The suite's seeded PRNG (support.mjs rng, mulberry32): the seed is in every failure message. */
export { rng as prng };

/** A logger that keeps the lines ({ level, message }) instead of printing them. */
export function captureLogger() {
  const lines = [];
  return { lines, warn: (m) => lines.push({ level: 'warn', message: m }), info: (m) => lines.push({ level: 'info', message: m }) };
}

/**
 * The stores the suites run against: { name, open(options) -> store, setup(), teardown(), redis }.
 * Each open() is another client (another "instance") of the same backing store.
 */
export function storeKinds() {
  let shared = null;
  const memory = {
    name: 'memoryStore',
    setup: async () => { shared = server.memoryStore({ logger: captureLogger() }); },
    open: () => shared,
    teardown: async () => {},
  };
  const redis = {
    name: 'redisStore',
    redis: null,
    stores: [],
    setup: async () => { redis.redis = await RedisServer.start(); },
    open: (options = {}) => {
      const store = server.redisStore({ url: redis.redis.url, prefix: 'test:', logger: captureLogger(), ...options });
      redis.stores.push(store);
      return store;
    },
    teardown: async () => {
      for (const store of redis.stores.splice(0)) await store.close();
      await redis.redis?.close();
    },
  };
  return [memory, redis];
}

/** Feeds `events` (in order) to a fresh receiver; returns it (the caller disposes). */
export async function receiverOf(events) {
  const sync = await createStateSync();
  const encoder = new TextEncoder();
  for (const e of events) sync.feed(encoder.encode(`data: ${JSON.stringify(e)}\n\n`));
  return sync;
}

/**
 * `raw`'s contract methods, bound, as a store of its own: without
 * incrementalState or watch unless `extra` adds them; `extra` also replaces
 * methods (an append that counts, or loses every race).
 */
export function storeOf(raw, extra = {}) {
  return { ...Object.fromEntries(STORE_METHODS.map((m) => [m, raw[m].bind(raw)])), ...extra };
}

export { until } from '../support/until.mjs';

/** Asserts that `events` carry consecutive seqs from `first`. */
export function assertConsecutive(events, first, message) {
  events.forEach((e, i) => assert.equal(e.metadata['agui-state-sync'].seq, first + i, `${message}: event ${i}`));
}
