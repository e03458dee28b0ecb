// The JS copy of the engine's state, updated without re-reading the whole state.
//
// The C++ engine is the source of truth. For every applied delta it returns the
// event verbatim, and that delta is guaranteed to apply cleanly to the previous
// state, so the mirror replays it here on an immutable tree with structural
// sharing: only the spine of each touched path is copied; every subtree the
// delta does not touch keeps its object identity (cheap React re-renders).
//
// Keys are arbitrary JSON strings. "__proto__", "constructor", "prototype" must
// end up as own data properties and never reach a prototype, so properties are
// only ever created with Object.defineProperty (or copied with object spread,
// which defines), looked up with hasOwnProperty, and removed with `delete`.
import { syncError } from '../engine/errors.js';
import { parseIndex, parsePointer } from './json-pointer.js';

const hasOwn = Object.prototype.hasOwnProperty;

function isContainer(value) {
  return value !== null && typeof value === 'object';
}

// Plain assignment is V8's fast path and, on a plain object whose own
// properties are all writable data properties (JSON.parse output, spread
// copies), creates or updates an own data property for every key except
// "__proto__", whose assignment would set the prototype instead.
function defineOwn(object, key, value) {
  if (key === '__proto__') {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

function shallowCopy(node) {
  return Array.isArray(node) ? node.slice() : { ...node };
}

function child(node, token) {
  if (Array.isArray(node)) return node[parseIndex(token, node.length, false)];
  if (!isContainer(node) || !hasOwn.call(node, token)) {
    throw syncError('patch-failed', `path component ${JSON.stringify(token)} does not exist`);
  }
  return node[token];
}

/** The value at `tokens`, or an error thrown when it does not exist. */
export function getAt(doc, tokens) {
  let node = doc;
  for (let i = 0; i < tokens.length; i++) node = child(node, tokens[i]);
  return node;
}

// Only a delta that edits more than once (several ops, or a move) can revisit
// a container it created, so the common single add/replace/remove skips the set.
function mayRevisit(ops) {
  return ops.length > 1 || (ops.length === 1 && ops[0] !== null && typeof ops[0] === 'object' && ops[0].op === 'move');
}

// One delta's edits on a copy-on-write document: `doc` starts as the caller's
// root, and every container on an edited path is copied once before it changes.
class DeltaEditor {
  doc;
  #docFresh = false; // `doc` is our own copy
  // Containers created during this delta: safe to modify in place for the
  // following operations of the same delta (no one else has seen them yet).
  #fresh;

  constructor(root, fresh) {
    this.doc = root;
    this.#fresh = fresh;
  }

  /** Applies one RFC 6902 operation (the engine already checked that it applies). */
  apply(op) {
    switch (op.op) {
      case 'test':
        return; // the engine checked it
      case 'add':
        return this.#add(parsePointer(op.path), op.value);
      case 'remove':
        return this.#remove(parsePointer(op.path));
      case 'replace':
        return this.#replace(parsePointer(op.path), op.value);
      case 'move':
        return this.#move(op.from, op.path);
      case 'copy':
        return this.#copy(op.from, op.path);
      default:
        throw syncError('invalid-patch', `unknown operation ${JSON.stringify(op.op)}`);
    }
  }

  // Copies the spine from the root down to the parent of tokens[last]; returns the parent.
  #editParent(tokens) {
    if (!this.#docFresh) {
      if (!isContainer(this.doc)) throw syncError('patch-failed', 'the document is not a container');
      this.doc = shallowCopy(this.doc);
      this.#docFresh = true;
    }
    const fresh = this.#fresh;
    let node = this.doc;
    for (let i = 0; i < tokens.length - 1; i++) {
      const token = tokens[i];
      let next = child(node, token);
      if (fresh === null || !fresh.has(next)) {
        if (!isContainer(next)) throw syncError('patch-failed', `path component ${JSON.stringify(token)} is not a container`);
        next = shallowCopy(next);
        if (fresh !== null) fresh.add(next);
        if (Array.isArray(node)) node[parseIndex(token, node.length, false)] = next;
        else defineOwn(node, token, next);
      }
      node = next;
    }
    return node;
  }

  // A root-level add/replace swaps in the event's own value, which is not ours to edit.
  #setRoot(value) {
    this.doc = value;
    this.#docFresh = false;
  }

  #add(tokens, value) {
    if (tokens.length === 0) return this.#setRoot(value);
    const parent = this.#editParent(tokens);
    const last = tokens[tokens.length - 1];
    if (Array.isArray(parent)) {
      const index = parseIndex(last, parent.length, true);
      if (index === parent.length) parent.push(value);
      else parent.splice(index, 0, value);
    } else defineOwn(parent, last, value);
  }

  #remove(tokens) {
    if (tokens.length === 0) throw syncError('patch-failed', 'cannot remove the whole document');
    const parent = this.#editParent(tokens);
    const last = tokens[tokens.length - 1];
    if (Array.isArray(parent)) {
      parent.splice(parseIndex(last, parent.length, false), 1);
    } else {
      if (!hasOwn.call(parent, last)) throw syncError('patch-failed', `path component ${JSON.stringify(last)} does not exist`);
      delete parent[last];
    }
  }

  #replace(tokens, value) {
    if (tokens.length === 0) return this.#setRoot(value);
    const parent = this.#editParent(tokens);
    const last = tokens[tokens.length - 1];
    if (Array.isArray(parent)) parent[parseIndex(last, parent.length, false)] = value;
    else {
      if (!hasOwn.call(parent, last)) throw syncError('patch-failed', `path component ${JSON.stringify(last)} does not exist`);
      defineOwn(parent, last, value);
    }
  }

  #move(fromPath, path) {
    if (fromPath === path) return;
    const from = parsePointer(fromPath);
    const value = getAt(this.doc, from);
    this.#remove(from);
    this.#add(parsePointer(path), value);
  }

  #copy(fromPath, path) {
    const value = getAt(this.doc, parsePointer(fromPath));
    // `value` is about to be reachable from two places: nothing may be
    // edited in place any more, or both places would change.
    this.#fresh = new Set();
    this.#docFresh = false;
    this.#add(parsePointer(path), value);
  }
}

/**
 * Applies one event's RFC 6902 operations to `root` and returns the new root.
 * `root` itself is never modified. Throws (an AguiSyncError) if an operation
 * does not apply; the caller then falls back to the engine's serialized state.
 */
export function applyDelta(root, ops) {
  if (!Array.isArray(ops)) throw syncError('invalid-patch', 'delta is not an array');
  const editor = new DeltaEditor(root, mayRevisit(ops) ? new Set() : null);
  for (let i = 0; i < ops.length; i++) editor.apply(ops[i]);
  return editor.doc;
}
