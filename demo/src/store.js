// A tiny observable value: what the React components subscribe to
// (useSyncExternalStore wants get + subscribe, nothing more).
export function store(initial) {
  let value = initial;
  const subs = new Set();
  return {
    get: () => value,
    set(v) { value = typeof v === 'function' ? v(value) : v; for (const f of subs) f(); },
    subscribe(f) { subs.add(f); return () => subs.delete(f); },
  };
}
