// A storage adapter that keeps checkpoints in a Map: for tests, Node, and
// pages that want a checkpoint only for the life of the realm. Any object with
// async get/set/delete is an adapter; this is the smallest one.

/** { get(key), set(key, value), delete(key) }, all async, over a Map (exposed as `entries` for tests). */
export function memoryStorage() {
  const entries = new Map();
  return {
    entries,
    async get(key) {
      return entries.get(key);
    },
    async set(key, value) {
      entries.set(key, value);
    },
    async delete(key) {
      entries.delete(key);
    },
  };
}
