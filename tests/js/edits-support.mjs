// Shared helpers for the user-edit suites (edits*.test.mjs, ag-ui-edits.test.mjs);
// not a test file itself.
//  - referenceApply: an RFC 6902 applier of its own (deep copies, no sharing),
//    independent of the engine and of the JS mirror, to check what they do;
//  - EditPair: an agent (emitter) and a client (StateSync) on a perfect link,
//    as in tests/native/test_edits.cpp.
import assert from 'node:assert/strict';
import { pkg } from './support.mjs';

const { createStateEmitter, createStateSync } = pkg;
const hasOwn = Object.prototype.hasOwnProperty;

// --- an independent RFC 6902 applier -------------------------------------------

class PatchError extends Error {}

function tokensOf(pointer) {
  if (typeof pointer !== 'string' || (pointer !== '' && pointer[0] !== '/')) throw new PatchError(`bad pointer ${pointer}`);
  if (pointer === '') return [];
  return pointer.slice(1).split('/').map((t) => {
    if (/~[^01]|~$/.test(t)) throw new PatchError(`bad escape in ${pointer}`);
    return t.replace(/~1/g, '/').replace(/~0/g, '~');
  });
}

function arrayIndex(token, length, forAdd) {
  if (forAdd && token === '-') return length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchError(`bad index ${token}`);
  const index = Number(token);
  if (index > (forAdd ? length : length - 1)) throw new PatchError(`index ${token} out of range`);
  return index;
}

function containerAt(doc, tokens) {
  let node = doc;
  for (const token of tokens) {
    if (Array.isArray(node)) node = node[arrayIndex(token, node.length, false)];
    else if (node !== null && typeof node === 'object' && hasOwn.call(node, token)) node = node[token];
    else throw new PatchError(`no ${token}`);
  }
  return node;
}

function setOwn(object, key, value) {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

/** RFC 6902 equality: numbers by value, objects without regard to key order. */
export function jsonEquals(a, b) {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => hasOwn.call(b, k) && jsonEquals(a[k], b[k]));
}

function addAt(doc, tokens, value) {
  if (tokens.length === 0) return value;
  const parent = containerAt(doc, tokens.slice(0, -1));
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) parent.splice(arrayIndex(last, parent.length, true), 0, value);
  else if (parent !== null && typeof parent === 'object') setOwn(parent, last, value);
  else throw new PatchError('parent is not a container');
  return doc;
}

function removeAt(doc, tokens) {
  if (tokens.length === 0) throw new PatchError('cannot remove the root');
  const parent = containerAt(doc, tokens.slice(0, -1));
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) return parent.splice(arrayIndex(last, parent.length, false), 1)[0];
  if (parent === null || typeof parent !== 'object' || !hasOwn.call(parent, last)) throw new PatchError(`no ${last}`);
  const value = parent[last];
  delete parent[last];
  return value;
}

function replaceAt(doc, tokens, value) {
  containerAt(doc, tokens); // it must exist
  if (tokens.length === 0) return value;
  removeAt(doc, tokens);
  return addAt(doc, tokens, value);
}

function testAt(doc, tokens, value) {
  if (!jsonEquals(containerAt(doc, tokens), value)) throw new PatchError('test failed');
  return doc;
}

function moveTo(doc, from, path) {
  if (from.length < path.length && from.every((t, i) => t === path[i])) throw new PatchError('move into itself');
  return addAt(doc, path, removeAt(doc, from));
}

function applyOp(doc, op) {
  if (op === null || typeof op !== 'object') throw new PatchError('not an op');
  const path = tokensOf(op.path);
  switch (op.op) {
    case 'add':
      return addAt(doc, path, structuredClone(op.value));
    case 'remove':
      removeAt(doc, path);
      return doc;
    case 'replace':
      return replaceAt(doc, path, structuredClone(op.value));
    case 'test':
      return testAt(doc, path, op.value);
    case 'copy':
      return addAt(doc, path, structuredClone(containerAt(doc, tokensOf(op.from))));
    case 'move':
      return moveTo(doc, tokensOf(op.from), path);
    default:
      throw new PatchError(`unknown op ${op.op}`);
  }
}

/** `ops` applied to a deep copy of `doc`, or null when any op does not apply (then nothing is). */
export function referenceApply(doc, ops) {
  let next = structuredClone(doc);
  try {
    for (const op of ops) next = applyOp(next, op);
  } catch (error) {
    if (error instanceof PatchError) return null;
    throw error;
  }
  return next;
}

// --- an agent and a client ----------------------------------------------------

/** SSE bytes of `events` (ids on). */
export function encodeAll(emitter, events) {
  return events.map((event) => emitter.encode(event)).join('');
}

export const PAIR_POLICY = Object.freeze({ ownership: Object.freeze({ '/proposal': 'agent', '/form': 'user' }) });
export const PAIR_STATE = Object.freeze({ proposal: { to: 'alice' }, form: { note: 'hi' }, shared: { budget: 10 } });

/** An agent (emitter) and one client (StateSync, clientId 'tab1') on a perfect link. */
export class EditPair {
  static async create({ onConflict = 'agent-wins', initialState = PAIR_STATE, sync = {} } = {}) {
    const emitter = await createStateEmitter({ initialState, snapshotRatio: 100 }); // deltas, always
    const client = await createStateSync({ ...PAIR_POLICY, onConflict, clientId: 'tab1', ...sync });
    const pair = new EditPair(emitter, client, { ...PAIR_POLICY, onConflict });
    pair.deliver([emitter.snapshot()]);
    return pair;
  }

  constructor(emitter, sync, policy) {
    this.emitter = emitter;
    this.sync = sync;
    this.policy = policy;
    this.results = [];
  }

  /** Feeds `events` to the client in one chunk: its outcomes. */
  deliver(events) {
    return this.sync.feed(encodeAll(this.emitter, events));
  }

  /** The agent writes `ops`; the client receives them. */
  agent(ops) {
    return this.deliver(this.emitter.patch(ops));
  }

  /** A run: the pending edits travel to the agent, which judges them; the client receives the result. */
  run() {
    const { events, results } = this.emitter.applyEdits(this.sync.pendingEdits(), this.policy);
    this.results = results;
    return this.deliver(events);
  }

  /** A local edit that must be accepted: its editId. */
  edit(ops) {
    const result = this.sync.edit(ops);
    assert.ok(result.ok, `edit refused: ${result.message}`);
    return result.editId;
  }

  dispose() {
    this.sync.dispose();
    this.emitter.dispose();
  }
}

/** The first outcome of `kind`, or undefined. */
export function find(outcomes, kind) {
  return outcomes.find((outcome) => outcome.kind === kind);
}
