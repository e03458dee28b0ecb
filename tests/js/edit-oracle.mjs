// An independent model of how the agent side judges user edits (docs/wire.md
// section 9), written from the documented rules, for the seeded property test
// of StateEmitter.applyEdits (emitter-edits.test.mjs). Not a test file itself.
// It covers the ops the generator makes (add, replace, remove, test) on states
// whose arrays hold scalars, so "a write to an array element is a write to the
// array" only ever means the element's parent.
import { isDeepStrictEqual } from 'node:util';

/** "" -> [], "/a/0" -> ["a", "0"] (the generator never needs ~ escapes). */
export function tokens(pointer) {
  return pointer === '' ? [] : pointer.slice(1).split('/');
}

function isPrefix(prefix, path) {
  return prefix.length <= path.length && prefix.every((t, i) => t === path[i]);
}

function overlaps(a, b) {
  return isPrefix(a, b) || isPrefix(b, a);
}

function parentOf(doc, path) {
  let node = doc;
  for (const t of path.slice(0, -1)) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, t)) return undefined;
    node = node[t];
  }
  return node;
}

/** Where a write at `pointer` counts for overlap in `doc`: the array when it names an element. */
function writtenPath(doc, pointer) {
  const path = tokens(pointer);
  return path.length > 0 && Array.isArray(parentOf(doc, path)) ? path.slice(0, -1) : path;
}

/** The paths `ops` write (test only reads), as seen in `doc`. */
export function writesOf(doc, ops) {
  return ops.filter((op) => op.op !== 'test').map((op) => writtenPath(doc, op.path));
}

const MAX_FINE_WRITES = 64;

// Where `a` and `b` differ: member by member through objects, anything else
// (arrays included) as a whole; null when more than `budget.left` pointers.
function differences(a, b, path, out, budget) {
  const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(a) || !isObject(b)) {
    if (isDeepStrictEqual(a, b)) return true;
    if (budget.left === 0) return false;
    budget.left -= 1;
    out.push(path);
    return true;
  }
  for (const key of Object.keys(a)) {
    if (Object.hasOwn(b, key)) {
      if (!differences(a[key], b[key], [...path, key], out, budget)) return false;
    } else {
      if (budget.left === 0) return false;
      budget.left -= 1;
      out.push([...path, key]);
    }
  }
  for (const key of Object.keys(b)) {
    if (Object.hasOwn(a, key)) continue;
    if (budget.left === 0) return false;
    budget.left -= 1;
    out.push([...path, key]);
  }
  return true;
}

/**
 * The agent's writes as the change log keeps them (docs/wire.md section 9): in
 * `before`, the state the ops apply to; a replace (or an add over an existing
 * member) counts only the members whose values change.
 */
export function agentWritesOf(before, ops) {
  const out = [];
  for (const op of ops) {
    if (op.op === 'test') continue;
    const path = tokens(op.path);
    const written = writtenPath(before, op.path);
    const parent = parentOf(before, path);
    const old = path.length === 0 ? before : parent !== null && typeof parent === 'object' && Object.hasOwn(parent, path.at(-1)) ? parent[path.at(-1)] : undefined;
    if ((op.op === 'replace' || op.op === 'add') && written.length === path.length && old !== undefined) {
      const fine = [];
      if (differences(old, op.value, path, fine, { left: MAX_FINE_WRITES })) {
        out.push(...fine);
        continue;
      }
    }
    out.push(written);
  }
  return out;
}

// --- a small RFC 6902 applier for the generated ops ---------------------------

function index(array, token, forAdd) {
  if (forAdd && token === '-') return array.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return -1;
  const i = Number(token);
  return i < array.length + (forAdd ? 1 : 0) ? i : -1;
}

function applyOp(doc, op) {
  const path = tokens(op.path);
  if (path.length === 0) {
    if (op.op === 'test') return isDeepStrictEqual(doc, op.value) ? { doc } : { failed: 'precondition-failed' };
    if (op.op === 'remove') return { failed: 'patch-failed' };
    return { doc: structuredClone(op.value) };
  }
  const parent = parentOf(doc, path);
  const last = path.at(-1);
  if (parent === null || typeof parent !== 'object') return { failed: 'patch-failed' };
  if (Array.isArray(parent)) {
    const i = index(parent, last, op.op === 'add');
    if (i < 0) return { failed: 'patch-failed' };
    if (op.op === 'test') return isDeepStrictEqual(parent[i], op.value) ? { doc } : { failed: 'precondition-failed' };
    if (op.op === 'add') parent.splice(i, 0, structuredClone(op.value));
    else if (op.op === 'remove') parent.splice(i, 1);
    else parent[i] = structuredClone(op.value);
    return { doc };
  }
  const has = Object.hasOwn(parent, last);
  if (op.op === 'test') return has && isDeepStrictEqual(parent[last], op.value) ? { doc } : { failed: 'precondition-failed' };
  if (op.op !== 'add' && !has) return { failed: 'patch-failed' };
  if (op.op === 'remove') delete parent[last];
  else parent[last] = structuredClone(op.value);
  return { doc };
}

/** `ops` applied to a copy of `doc`, all or nothing: { doc } or { failed: code }. */
export function applyOps(doc, ops) {
  let next = structuredClone(doc);
  for (const op of ops) {
    const r = applyOp(next, op);
    if (r.failed) return r;
    next = r.doc;
  }
  return { doc: next };
}

// --- the agent side ------------------------------------------------------------

/** The part of an editId before its last ':' (the whole id without one). */
export function originOf(editId) {
  const at = editId.lastIndexOf(':');
  return at < 0 ? editId : editId.slice(0, at);
}

/**
 * The emitter as the rules describe it: its state and seq, the change log
 * (who wrote which paths at each seq), and the verdicts by editId.
 * `history`: seqs kept in the change log (editHistory).
 */
export class EditOracle {
  constructor(state, { seq = 0, history = 4096 } = {}) {
    this.state = structuredClone(state);
    this.seq = seq;
    this.start = seq;
    this.floor = seq; // every write after this seq is in `log`
    this.history = history;
    this.log = []; // { seq, origin, paths }
    this.verdicts = new Map();
  }

  #record(origin, paths) {
    this.seq += 1;
    this.log.push({ seq: this.seq, origin, paths });
    while (this.log.length > this.history) this.floor = this.log.shift().seq;
  }

  /** The agent's own write (emitter.patch): `ops` apply (the caller made sure). */
  agentPatch(ops) {
    const writes = agentWritesOf(this.state, ops); // as the emitter records them: before, member by member
    const { doc } = applyOps(this.state, ops);
    this.state = doc;
    this.#record('', writes);
  }

  #writtenSince(baseSeq, origin, paths) {
    const from = baseSeq ?? this.start;
    if (from < this.floor || from > this.seq) return true;
    return this.log.some((c) => c.seq > from && c.origin !== origin && c.paths.some((w) => paths.some((p) => overlaps(w, p))));
  }

  static owner(rules, path) {
    let best = null;
    for (const [pointer, who] of Object.entries(rules)) {
      const prefix = tokens(pointer);
      if (isPrefix(prefix, path) && (best === null || prefix.length >= best.length)) best = { length: prefix.length, who };
    }
    const own = best?.who ?? 'shared';
    if (own === 'agent') return own;
    const above = Object.entries(rules).some(([pointer, who]) => who === 'agent' && tokens(pointer).length > path.length && isPrefix(path, tokens(pointer)));
    return above ? 'agent' : own;
  }

  #judge(edit, policy, written) {
    if (edit.ops.length === 0) return { status: 'rejected', reason: 'invalid-patch' };
    const writes = writesOf(this.state, edit.ops);
    const owners = writes.map((w) => EditOracle.owner(policy.ownership ?? {}, w));
    if (owners.includes('agent')) return { status: 'rejected', reason: 'agent-owned' };
    const shared = writes.filter((w, i) => owners[i] === 'shared');
    const agentWins = (policy.onConflict ?? 'agent-wins') === 'agent-wins';
    if (agentWins && shared.length > 0 && this.#writtenSince(edit.baseSeq, originOf(edit.editId), shared)) {
      return { status: 'rejected', reason: 'conflict' };
    }
    const applied = applyOps(this.state, edit.ops);
    if (applied.failed) return { status: 'rejected', reason: applied.failed };
    this.state = applied.doc;
    written.push(...writes);
    return { status: 'applied' };
  }

  /**
   * emitter.applyEdits(edits, policy) as the rules say: { results, groups },
   * groups: per origin in first-seen order, { seq, acks } with the verdicts as
   * a STATE_DELTA carries them (seq only on a repeated one).
   */
  applyEdits(edits, policy) {
    const origins = [...new Set(edits.map((e) => originOf(e.editId)))];
    const results = [];
    const groups = [];
    for (const origin of origins) {
      const next = this.seq + 1;
      const written = [];
      const acks = [];
      for (const edit of edits.filter((e) => originOf(e.editId) === origin)) {
        const known = this.verdicts.get(edit.editId);
        const verdict = known ?? { editId: edit.editId, ...this.#judge(edit, policy, written), seq: next };
        if (!known) this.verdicts.set(edit.editId, verdict);
        results.push(verdict);
        const { seq, ...ack } = verdict;
        acks.push(known ? verdict : ack);
      }
      this.#record(origin, written);
      groups.push({ seq: next, acks });
    }
    return { results, groups };
  }
}
