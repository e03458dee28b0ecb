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
    throw new Error(`path component ${JSON.stringify(token)} does not exist`);
  }
  return node[token];
}

/** The value at `tokens`, or an Error thrown when it does not exist. */
export function getAt(doc, tokens) {
  let node = doc;
  for (let i = 0; i < tokens.length; i++) node = child(node, tokens[i]);
  return node;
}

/**
 * Applies one event's RFC 6902 operations to `root` and returns the new root.
 * `root` itself is never modified. Throws a plain Error if an operation does not
 * apply (the caller then falls back to the engine's serialized state).
 */
export function applyDelta(root, ops) {
  if (!Array.isArray(ops)) throw new Error('delta is not an array');
  // Containers created during this delta: safe to modify in place for the
  // following operations of the same delta (no one else has seen them yet).
  // Only a delta that edits more than once (several ops, or a move) can revisit
  // one, so the common single add/replace/remove skips the set.
  let fresh = ops.length > 1 || (ops.length === 1 && ops[0] !== null && typeof ops[0] === 'object' && ops[0].op === 'move')
    ? new Set()
    : null;
  let doc = root;
  let docFresh = false;

  // Copies the spine from the root down to the parent of tokens[last]; returns the parent.
  const editParent = (tokens) => {
    if (!docFresh) {
      if (!isContainer(doc)) throw new Error('the document is not a container');
      doc = shallowCopy(doc);
      docFresh = true;
    }
    let node = doc;
    for (let i = 0; i < tokens.length - 1; i++) {
      const token = tokens[i];
      let next = child(node, token);
      if (fresh === null || !fresh.has(next)) {
        if (!isContainer(next)) throw new Error(`path component ${JSON.stringify(token)} is not a container`);
        next = shallowCopy(next);
        if (fresh !== null) fresh.add(next);
        if (Array.isArray(node)) node[parseIndex(token, node.length, false)] = next;
        else defineOwn(node, token, next);
      }
      node = next;
    }
    return node;
  };

  // A root-level add/replace swaps in the event's own value, which is not ours to edit.
  const setRoot = (value) => {
    doc = value;
    docFresh = false;
  };

  const add = (tokens, value) => {
    if (tokens.length === 0) return setRoot(value);
    const parent = editParent(tokens);
    const last = tokens[tokens.length - 1];
    if (Array.isArray(parent)) {
      const index = parseIndex(last, parent.length, true);
      if (index === parent.length) parent.push(value);
      else parent.splice(index, 0, value);
    } else defineOwn(parent, last, value);
  };

  const remove = (tokens) => {
    if (tokens.length === 0) throw new Error('cannot remove the whole document');
    const parent = editParent(tokens);
    const last = tokens[tokens.length - 1];
    if (Array.isArray(parent)) {
      parent.splice(parseIndex(last, parent.length, false), 1);
    } else {
      if (!hasOwn.call(parent, last)) throw new Error(`path component ${JSON.stringify(last)} does not exist`);
      delete parent[last];
    }
  };

  const replace = (tokens, value) => {
    if (tokens.length === 0) return setRoot(value);
    const parent = editParent(tokens);
    const last = tokens[tokens.length - 1];
    if (Array.isArray(parent)) parent[parseIndex(last, parent.length, false)] = value;
    else {
      if (!hasOwn.call(parent, last)) throw new Error(`path component ${JSON.stringify(last)} does not exist`);
      defineOwn(parent, last, value);
    }
  };

  for (let i = 0; i < ops.length; i++) {
    const op = ops[i];
    switch (op.op) {
      case 'test':
        break; // the engine checked it
      case 'add':
        add(parsePointer(op.path), op.value);
        break;
      case 'remove':
        remove(parsePointer(op.path));
        break;
      case 'replace':
        replace(parsePointer(op.path), op.value);
        break;
      case 'move': {
        if (op.from === op.path) break;
        const from = parsePointer(op.from);
        const value = getAt(doc, from);
        remove(from);
        add(parsePointer(op.path), value);
        break;
      }
      case 'copy': {
        const value = getAt(doc, parsePointer(op.from));
        // `value` is about to be reachable from two places: nothing may be
        // edited in place any more, or both places would change.
        fresh = new Set();
        docFresh = false;
        add(parsePointer(op.path), value);
        break;
      }
      default:
        throw new Error(`unknown operation ${JSON.stringify(op.op)}`);
    }
  }
  return doc;
}
