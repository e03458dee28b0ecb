// Seeded fault injector for the demo's SSE stream.
//
// Every frame's fate is a pure function of (seed, frame key, delivery number):
// the key is `s<seq>` for a state event and `e<index>` for any other event of
// the run, and the delivery number counts how often that key went through the
// injector before (a replayed delta is a new delivery). So a fixed seed gives
// the same drops, duplicates and reorders on every run, whatever the timing.
// Connection drops are by the clock (every N seconds of a connection's life).

export const DEFAULTS = Object.freeze({
  seed: 1,
  drop: 0, // probability that a frame is never written
  duplicate: 0, // probability that a frame is written twice
  reorder: 0, // probability that a frame is held back behind the next 1-2 frames
  latencyMs: 0, // added to every frame
  jitterMs: 0, // + up to this much, seeded (order is kept)
  disconnectEverySec: 0, // 0 = never; else the server cuts each connection after N s (mid-frame)
  outageMs: 0, // after a cut, new connections of that thread stall this long (a tunnel)
});

export const PRESETS = Object.freeze({
  clean: { ...DEFAULTS },
  lossy: { ...DEFAULTS, drop: 0.08, duplicate: 0.08, reorder: 0.1, latencyMs: 20, jitterMs: 30 },
  // Mobile on a train: high, jumpy latency, bursts of loss, a tunnel every few seconds.
  train: { ...DEFAULTS, drop: 0.06, duplicate: 0.05, reorder: 0.12, latencyMs: 120, jitterMs: 220, disconnectEverySec: 4, outageMs: 1800 },
});

const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));

export function normalizeFaults(input, base = DEFAULTS) {
  const preset = input && typeof input.preset === 'string' && PRESETS[input.preset] ? PRESETS[input.preset] : null;
  const src = { ...base, ...(preset || {}), ...(input || {}) };
  const num = (v, d) => (Number.isFinite(Number(v)) ? Number(v) : d);
  const out = {
    seed: Math.trunc(num(src.seed, DEFAULTS.seed)) >>> 0,
    drop: clamp(num(src.drop, 0), 0, 0.9),
    duplicate: clamp(num(src.duplicate, 0), 0, 0.9),
    reorder: clamp(num(src.reorder, 0), 0, 0.9),
    latencyMs: clamp(num(src.latencyMs, 0), 0, 5000),
    jitterMs: clamp(num(src.jitterMs, 0), 0, 5000),
    disconnectEverySec: clamp(num(src.disconnectEverySec, 0), 0, 600),
    outageMs: clamp(num(src.outageMs, 0), 0, 30000),
  };
  const total = out.drop + out.duplicate + out.reorder;
  if (total > 0.9) { const k = 0.9 / total; out.drop *= k; out.duplicate *= k; out.reorder *= k; }
  if (preset && input.preset) out.preset = input.preset;
  return out;
}

// 32-bit string hash (FNV-1a) finished with a murmur3 mix, then mapped to [0,1).
export function unit(seed, key) {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < key.length; i++) { h = (h ^ key.charCodeAt(i)) >>> 0; h = Math.imul(h, 0x01000193) >>> 0; }
  h = (h ^ (h >>> 16)) >>> 0; h = Math.imul(h, 0x85ebca6b) >>> 0; h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35) >>> 0; h = (h ^ (h >>> 16)) >>> 0;
  return h / 4294967296;
}

// 'drop' | 'duplicate' | 'reorder' | 'pass' for the n-th delivery of `key`.
export function fate(cfg, key, n) {
  const u = unit(cfg.seed, `${key}#${n}`);
  if (u < cfg.drop) return 'drop';
  if (u < cfg.drop + cfg.duplicate) return 'duplicate';
  if (u < cfg.drop + cfg.duplicate + cfg.reorder) return 'reorder';
  return 'pass';
}

// One faulty connection. `send(frame, key)` for events (subject to faults),
// `control(text)` for comments/heartbeats (never dropped, never overtake a frame).
export class FaultyWire {
  constructor(res, { id = 0, getConfig, deliveries, onCut, onWrite, onFate }) {
    this.id = id;
    this.res = res;
    this.getConfig = getConfig;
    this.deliveries = deliveries; // Map key -> count, shared by the thread's connections
    this.onCut = onCut;
    this.onWrite = onWrite || (() => {});
    this.onFate = onFate || (() => {});
    this.queue = []; // [{text, due}]
    this.held = []; // [{text, left}] frames held back for reordering
    this.deferred = []; // control frames waiting behind held ones
    this.lastDue = 0;
    this.timer = null;
    this.closed = false;
    this.framesOut = 0;
    const cfg = getConfig();
    if (cfg.disconnectEverySec > 0) {
      this.cutTimer = setTimeout(() => this.cut(), cfg.disconnectEverySec * 1000);
    }
    res.on('close', () => this.dispose());
  }

  send(text, key) {
    if (this.closed) return;
    const cfg = this.getConfig();
    const n = this.deliveries.get(key) || 0;
    this.deliveries.set(key, n + 1);
    const f = fate(cfg, key, n);
    this.onFate(key, n, f);
    if (f === 'drop') { this.tick(); return; }
    if (f === 'reorder') { this.held.push({ text, left: 1 + Math.floor(unit(cfg.seed, `${key}#${n}:k`) * 2) }); return; }
    this.enqueue(text);
    if (f === 'duplicate') this.enqueue(text);
    this.tick();
  }

  // A frame passed: held frames count down and are released behind it.
  tick() {
    const release = [];
    for (const h of this.held) if (--h.left <= 0) release.push(h);
    if (release.length) {
      this.held = this.held.filter((h) => h.left > 0);
      for (const h of release) this.enqueue(h.text);
    }
    if (!this.held.length) this.flushDeferred();
  }

  flushHeld() { for (const h of this.held) this.enqueue(h.text); this.held = []; this.flushDeferred(); }

  flushDeferred() { for (const text of this.deferred) this.enqueue(text); this.deferred = []; }

  // Heartbeats and comments: never faulted. While a frame is held back they
  // wait behind it, so a reorder stays a reorder of adjacent events whatever
  // the clock does (a heartbeat announcing the held seq early would turn it
  // into a gap, and the schedule would depend on timing).
  control(text) {
    if (this.closed) return;
    if (this.held.length) this.deferred.push(text);
    else this.enqueue(text);
  }

  // Spared from drop/duplicate/reorder (latency and cuts still apply); held
  // frames stay held.
  spared(text) { if (!this.closed) this.enqueue(text); }

  enqueue(text) {
    const cfg = this.getConfig();
    const jitter = cfg.jitterMs ? unit(cfg.seed, `j${this.id}:${this.framesOut}`) * cfg.jitterMs : 0;
    const due = Math.max(this.lastDue, Date.now() + cfg.latencyMs + jitter);
    this.lastDue = due;
    this.framesOut++;
    this.queue.push({ text, due });
    this.schedule();
  }

  schedule() {
    if (this.timer || this.closed || !this.queue.length) return;
    const wait = Math.max(0, this.queue[0].due - Date.now());
    if (wait === 0) { this.pump(); return; }
    this.timer = setTimeout(() => { this.timer = null; this.pump(); }, wait);
  }

  pump() {
    const now = Date.now();
    let out = '';
    while (this.queue.length && this.queue[0].due <= now) out += this.queue.shift().text;
    if (out && !this.closed) { this.res.write(out); this.onWrite(out.length); }
    this.schedule();
  }

  // Ends the response once everything queued has been written.
  finish(lastText = '') {
    if (this.closed) return;
    this.flushHeld();
    if (lastText) this.enqueue(lastText);
    const done = () => {
      if (this.closed) return;
      if (this.queue.length) { setTimeout(done, Math.max(1, this.queue[this.queue.length - 1].due - Date.now())); return; }
      this.closed = true; clearTimeout(this.cutTimer); this.res.end();
    };
    done();
  }

  // The network dies: write half of the next pending frame, then kill the socket.
  cut() {
    if (this.closed) return;
    const next = this.queue[0] || this.held[0];
    if (next) { const half = next.text.slice(0, Math.max(1, next.text.length >> 1)); this.res.write(half); this.onWrite(half.length); }
    this.closed = true;
    if (this.onCut) this.onCut();
    this.res.socket?.destroy();
    this.res.destroy();
    this.dispose();
  }

  dispose() {
    this.closed = true;
    clearTimeout(this.timer); clearTimeout(this.cutTimer);
    this.queue = []; this.held = []; this.deferred = [];
  }
}
