// The first place two JSON values differ, as a JSON Pointer: object members
// in the first value's key order, then members only the second has; arrays
// element by element, then the longer one's extra elements.

const escapeToken = (token) => String(token).replaceAll('~', '~0').replaceAll('/', '~1');
const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);
const hasOwn = (object, key) => Object.prototype.hasOwnProperty.call(object, key);

function difference(path, a, b) {
  const found = { path };
  if (a !== undefined) found.a = a;
  if (b !== undefined) found.b = b;
  return found;
}

function firstArrayDifference(path, a, b) {
  const common = Math.min(a.length, b.length);
  for (let i = 0; i < common; i++) {
    const found = firstDifference(a[i], b[i], `${path}/${i}`);
    if (found !== null) return found;
  }
  if (a.length === b.length) return null;
  return difference(`${path}/${common}`, a[common], b[common]);
}

function firstObjectDifference(path, a, b) {
  for (const key of Object.keys(a)) {
    const at = `${path}/${escapeToken(key)}`;
    if (!hasOwn(b, key)) return difference(at, a[key], undefined);
    const found = firstDifference(a[key], b[key], at);
    if (found !== null) return found;
  }
  for (const key of Object.keys(b)) {
    if (!hasOwn(a, key)) return difference(`${path}/${escapeToken(key)}`, undefined, b[key]);
  }
  return null;
}

/** null when `a` and `b` are equal JSON, else { path, a?, b? } (a side is absent where the value is missing). */
export function firstDifference(a, b, path = '') {
  if (Array.isArray(a) && Array.isArray(b)) return firstArrayDifference(path, a, b);
  if (isObject(a) && isObject(b)) return firstObjectDifference(path, a, b);
  return a === b ? null : difference(path, a, b);
}
