// RFC 6902 operations that turn one JSON value into another: what an
// upstream's snapshot changed since its previous state, so the proxy can
// apply just that on top of the thread's state (thread.js rebase) instead of
// replacing the thread's state, and with it the edits other clients made
// meanwhile. Objects member by member; an array of unchanged length element
// by element, else replaced whole (indexes shift: a write into an array is a
// write to the whole array, as for edits). O(size of the two values).
import { escapeToken } from '../shared/json-pointer.js';

const hasOwn = Object.prototype.hasOwnProperty;
const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

function sameJson(a, b) {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => hasOwn.call(b, k) && sameJson(a[k], b[k]));
}

function diffInto(ops, path, a, b) {
  if (sameJson(a, b)) return;
  if (isObject(a) && isObject(b)) {
    for (const key of Object.keys(a)) if (!hasOwn.call(b, key)) ops.push({ op: 'remove', path: `${path}/${escapeToken(key)}` });
    for (const key of Object.keys(b)) {
      const at = `${path}/${escapeToken(key)}`;
      if (hasOwn.call(a, key)) diffInto(ops, at, a[key], b[key]);
      else ops.push({ op: 'add', path: at, value: b[key] });
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (let i = 0; i < a.length; i++) diffInto(ops, `${path}/${i}`, a[i], b[i]);
    return;
  }
  ops.push({ op: 'replace', path, value: b });
}

/** The operations that turn `a` into `b` ([] when they are equal JSON). */
export function diffOps(a, b) {
  const ops = [];
  diffInto(ops, '', a, b);
  return ops;
}
